// Label placement never lets two labels of a row overlap or leave the plot, and the browser
// helper fails loudly (never skips) when chromium is missing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTimelines } from '../../src/report/html/index.js';
import { placeLabels, textWidth } from '../../src/report/html/layout.js';
import { geometry, plotRange } from '../../src/report/html/svg-lane.js';
import { launchChromium } from '../helpers/browser.js';
import { sampleRuns } from '../helpers/sample-runs.js';

test('placed labels of one row never overlap and stay inside the plot', () => {
  const { timelines, scale } = buildTimelines(sampleRuns(), plotRange);
  const rows = timelines.flatMap((t) => t.lanes.flatMap((l) => l.rows)).filter((r) => r.kind === 'marks');
  let placedCount = 0;
  for (const row of rows) {
    const bounds: [number, number] = [plotRange[0], geometry.width - 2];
    const requests = row.marks.map((m) => ({
      item: m,
      x: scale.x(m.at),
      label: m.label,
      priority: m.priority,
      bold: m.evidence || m.tone === 'key',
    }));
    const { placed } = placeLabels(requests, bounds, 3);
    placedCount += placed.length;
    const spans = placed.map((p) => {
      const w = textWidth(p.label, 11, p.bold);
      return {
        row: p.row,
        a: p.anchor === 'start' ? p.textX : p.textX - w,
        b: p.anchor === 'start' ? p.textX + w : p.textX,
      };
    });
    for (const s of spans) {
      assert.ok(s.a >= bounds[0] - 1 && s.b <= bounds[1] + 1, `inside: ${s.a}..${s.b}`);
      for (const o of spans) {
        if (o !== s && o.row === s.row) assert.ok(s.b <= o.a || o.b <= s.a, `no overlap in row ${s.row}`);
      }
    }
  }
  assert.ok(placedCount > 40, `most labels find room (${placedCount})`);
});

test('the most important labels are placed first, whatever their order', () => {
  const requests = [
    { item: 'minor', x: 200, label: 'a minor label that is long', priority: 0 },
    { item: 'key', x: 210, label: 'the key label', priority: 9 },
  ];
  const { placed } = placeLabels(requests, [150, 1100], 1);
  assert.deepEqual(
    placed.map((p) => p.item),
    ['key'],
  );
});

test('a missing chromium fails the browser tests with the command that installs it', async () => {
  await assert.rejects(
    launchChromium('/nonexistent/chromium'),
    /nonexistent\/chromium not found: .*apt-get install -y chromium/,
  );
});
