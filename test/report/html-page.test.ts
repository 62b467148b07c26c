// The page as a string: self-contained, escaped, accessible in structure, small, reproducible.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { summarizeRun } from '../../src/report/summary.js';
import { sampleRuns } from '../helpers/sample-runs.js';
import { hostile, hostileRun, interruptedRun } from '../helpers/sample-variants.js';

const count = (text: string, part: string) => text.split(part).length - 1;

test('hostile strings from the document are escaped everywhere: no markup, one script', () => {
  const html = renderHtmlReport([hostileRun(), ...sampleRuns()], { title: hostile.name });
  assert.equal(count(html, '<script'), 1);
  assert.equal(count(html, '</script'), 1);
  assert.doesNotMatch(html, /<img/i);
  assert.doesNotMatch(html, /<svg onload/i);
  assert.doesNotMatch(html, /<b>bold/);
  // The text itself is kept, as text.
  assert.ok(html.includes('&lt;/script&gt;&lt;img src=x onerror='), 'the body is shown escaped');
  assert.ok(html.includes('&lt;svg onload=alert(2)&gt;'), 'the scenario name is shown escaped');
  // No attribute value is broken out of: every quote in a tag's attributes is balanced.
  for (const tag of html.match(/<[a-z][^>]*>/gi) ?? []) {
    assert.equal(count(tag, '"') % 2, 0, tag);
  }
});

test('one self-contained file: nothing to fetch, and a CSP that pins the inline style and script', () => {
  const html = renderHtmlReport(sampleRuns());
  assert.doesNotMatch(html, /\b(src|srcset)=/i);
  assert.doesNotMatch(html, /(href|url\()\s*=?\s*["']?(https?:|\/\/)/i);
  assert.doesNotMatch(html, /@import|<link\b|<iframe|<object/i);
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
  assert.ok(csp, 'a CSP meta tag');
  assert.match(csp, /default-src 'none'/);
  const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
  const hash = (t: string) => createHash('sha256').update(t, 'utf8').digest('base64');
  assert.ok(csp.includes(`style-src 'sha256-${hash(style)}'`), 'style hash');
  assert.ok(csp.includes(`script-src 'sha256-${hash(script)}'`), 'script hash');
});

test('three realistic runs make a page under 200 KB', () => {
  const bytes = Buffer.byteLength(renderHtmlReport(sampleRuns(), { generatedAt: '2026-12-02T14:10:00Z' }));
  assert.ok(bytes < 200 * 1024, `${bytes} bytes`);
});

test('the table and sentences carry the story: caption, scoped headers, every summary row', () => {
  const docs = [...sampleRuns(), interruptedRun()];
  const html = renderHtmlReport(docs);
  const table = /<table class="comparison">([\s\S]*?)<\/table>/.exec(html)![1]!;
  assert.match(table, /^<caption>/);
  assert.equal(count(table, '<th scope="col">'), 7);
  assert.equal(count(table, '<th scope="row">'), docs.length);
  for (const doc of docs) {
    const row = summarizeRun(doc);
    for (const value of [row.acceptedUid, row.firstTerminating, row.outcome, row.exit, row.verdict]) {
      assert.ok(table.includes(`<td>${value}</td>`) || table.includes(`>${value}</td>`), value);
    }
    // An inconclusive one without its "Inconclusive: " (the badge says it) and first letter.
    const words = doc.verdict.explanation.replace(/^Inconclusive: ./, '');
    assert.ok(html.includes(words), `the explanation sentence: ${words}`);
  }
  assert.match(table, /<tr class="incomplete">[\s\S]*incomplete: interrupted\b/);
  assert.match(html, /class="incomplete-banner"[^>]*><strong>Incomplete run:<\/strong> interrupted\b/);
});

test('every SVG is an image labelled by elements that exist', () => {
  const html = renderHtmlReport(sampleRuns());
  const svgs = [...html.matchAll(/<svg class="timeline"[^>]*>/g)].map((m) => m[0]);
  const timelines = svgs.filter((s) => s.includes('role="img"'));
  assert.equal(timelines.length, 1 + 2 * 3, 'the comparison, and an overview and a close-up per run');
  for (const svg of timelines) {
    const ids = /aria-labelledby="([^"]+)"/.exec(svg)![1]!.split(' ');
    for (const id of ids) assert.ok(html.includes(` id="${id}"`), `#${id} exists`);
  }
  const legend = svgs.filter((s) => !s.includes('role="img"'));
  assert.ok(
    legend.every((s) => s.includes('aria-hidden="true"')),
    'legend swatches are hidden from screen readers',
  );
});

test('the output is reproducible without generatedAt, and empty input still makes a page', () => {
  assert.equal(renderHtmlReport(sampleRuns()), renderHtmlReport(sampleRuns()));
  const empty = renderHtmlReport([], { title: 'nothing yet' });
  assert.match(empty, /<title>nothing yet<\/title>/);
  assert.match(empty, /No runs to show/);
});

test('a verdict’s reason is said once: beside the explanation only when the explanation does not already say it', () => {
  const [base] = sampleRuns();
  const reason = 'the server refused the work stream — it says it never processed it';
  const inconclusive = {
    ...base!,
    verdict: {
      ...base!.verdict,
      kind: 'inconclusive' as const,
      reason,
      explanation: `Inconclusive: ${reason}.`,
    },
  };
  const once = renderHtmlReport([inconclusive]);
  // The list of explanations and the run's own verdict line: each says it once, and the kind
  // once (the badge), not again as the explanation's "Inconclusive:".
  const sentence = `The server refused the work stream — it says it never processed it.`;
  assert.equal(count(once, sentence), 2, 'once in the list, once in the run section');
  assert.equal(count(once, reason), 0, 'never a second time, lower-case, beside it');
  assert.doesNotMatch(once, /class="reason"/);
  assert.doesNotMatch(once, /Inconclusive:/);
  // A reason the explanation does not hold is still shown beside it.
  const other = { ...inconclusive, verdict: { ...inconclusive.verdict, explanation: 'Inconclusive.' } };
  assert.equal(count(renderHtmlReport([other]), `<span class="reason">(${reason})</span>`), 2);
});
