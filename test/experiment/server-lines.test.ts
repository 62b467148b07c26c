// Which server lines become events: bounded in number and size, but never the first of a
// kind — the journal lines the conclusion reads (request-accepted for the work, exit ...).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  JOURNAL_EVENTS_KEPT_PER_KIND,
  OUTPUT_EVENTS_KEPT,
  ServerLines,
} from '../../src/experiment/server-lines.js';
import type { JournalEvent, JournalLine } from '../../src/server/journal.js';

const line = (event: JournalEvent, id?: string): JournalLine => ({
  event,
  time: '2026-01-01T00:00:00.000Z',
  uid: 'u',
  ...(id ? { id } : {}),
});

test('after 1,000 journal lines about other requests, the work request’s first lines and the first exit are kept', () => {
  const lines = new ServerLines('work-1');
  let kept = 0;
  for (let i = 0; i < 1000; i++)
    if (lines.keepJournal(line('request-accepted', `other-${i}`), 100, i)) kept++;
  assert.equal(kept, JOURNAL_EVENTS_KEPT_PER_KIND);
  assert.equal(lines.keepJournal(line('request-accepted', 'work-1'), 100, 1000), true);
  assert.equal(lines.keepJournal(line('exit'), 100, 1001), true);
  assert.deepEqual(lines.notKept(), [
    {
      kind: 'journal',
      lines: 1000 - JOURNAL_EVENTS_KEPT_PER_KIND,
      chars: (1000 - JOURNAL_EVENTS_KEPT_PER_KIND) * 100,
      firstAt: JOURNAL_EVENTS_KEPT_PER_KIND,
      lastAt: 999,
      byEvent: { 'request-accepted': 1000 - JOURNAL_EVENTS_KEPT_PER_KIND },
    },
  ]);
});

test('output lines: the first 2,000 are kept, the rest counted; size counts as JSON (escapes included)', () => {
  const lines = new ServerLines('work-1');
  let kept = 0;
  for (let i = 0; i < 3000; i++) if (lines.keepOutput(`line ${i}`, i)) kept++;
  assert.equal(kept, OUTPUT_EVENTS_KEPT);
  assert.equal(lines.notKept()[0]?.lines, 1000);
  // 4096 control characters are 24,578 characters of JSON: far fewer fit.
  const escaped = new ServerLines('work-1');
  let keptEscaped = 0;
  for (let i = 0; i < 1000; i++) if (escaped.keepOutput('\u0001'.repeat(4096), i)) keptEscaped++;
  assert.ok(keptEscaped < 200, `kept ${keptEscaped}`);
});
