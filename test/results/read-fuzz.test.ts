// Run documents read back are untrusted: many mutated and garbage documents through the
// reader and every renderer (text, --json, --html). Each one either renders or is refused
// with one line (DC_INPUT_FILE, exit 2) — never a stack trace. Most run in-process; a few
// go through the real CLI.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isDraincheckError } from '../../src/errors.js';
import { parseRunDocument, RUN_DOCUMENT_MAX_DEPTH } from '../../src/results/read.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { renderTextReport } from '../../src/report/text.js';
import { plainStyle } from '../../src/report/style.js';
import { cli } from '../helpers/cli.js';
import { sampleRuns } from '../helpers/sample-runs.js';
import { hostileRun, interruptedRun, runWithoutEndpointSlices } from '../helpers/sample-variants.js';
import { prng } from '../helpers/prng.js';

const bases = (): unknown[] =>
  [...sampleRuns(), interruptedRun(), hostileRun(), runWithoutEndpointSlices()].map(
    (d) => JSON.parse(JSON.stringify(d)) as unknown,
  );

/** JSON text nested `depth` levels deep (built as text: JSON.stringify itself fails on it). */
function nestedText(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i += 1) {
    open += i % 2 ? '[' : '{"d":';
    close = (i % 2 ? ']' : '}') + close;
  }
  return `${open}1${close}`;
}

/** Stands for nested JSON of that depth until the text is written (see nestedText). */
const deepMarker = (depth: number) => `\u0000deep:${depth}`;

/** Every container (object or array) in the tree with its key path, up to a bound. */
function containers(
  root: unknown,
): Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> {
  const found: Array<{ parent: Record<string, unknown> | unknown[]; key: string | number }> = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && found.length < 5000) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    const entries = Array.isArray(node) ? node.map((v, i) => [i, v] as const) : Object.entries(node);
    for (const [key, value] of entries) {
      found.push({ parent: node as Record<string, unknown>, key });
      stack.push(value);
    }
  }
  return found;
}

function mutate(random: () => number, doc: unknown): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const values = (): unknown =>
    pick([
      null,
      true,
      false,
      0,
      -1,
      0.5,
      1e308,
      -1e308,
      2 ** 53 + 1,
      '',
      'x',
      'e1',
      '\u001b]0;title\u0007\u001b[2Jverdict: accepted-request-finished\r\n\u009b1A',
      '<script>alert(1)</script>',
      'y'.repeat(Math.floor(random() * 200_000)),
      [],
      {},
      { code: null, message: 5 },
      deepMarker(pick([3, 20, 40, RUN_DOCUMENT_MAX_DEPTH - 4, RUN_DOCUMENT_MAX_DEPTH + 1, 1000, 100_000])),
      Array.from({ length: Math.floor(random() * 3000) }, (_, i) => ({ id: `e${i}`, at: i })),
      'accepted-request-finished',
      'completed',
      'connection-dropped',
    ]);
  const steps = 1 + Math.floor(random() * 4);
  for (let s = 0; s < steps; s += 1) {
    const all = containers(doc);
    const target = pick(all);
    if (!target) break;
    const { parent, key } = target;
    const action = random();
    if (action < 0.55) (parent as Record<string | number, unknown>)[key] = values();
    else if (action < 0.7) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key as string];
    } else if (action < 0.8) {
      (parent as Record<string | number, unknown>)[Array.isArray(parent) ? parent.length : `k${s}`] =
        values();
    } else if (action < 0.9) {
      // Another part of the document in this place: the right shape in the wrong field.
      (parent as Record<string | number, unknown>)[key] = structuredClone(pick(all).parent);
    } else {
      const events = (doc as { events?: unknown }).events;
      if (Array.isArray(events) && events.length > 0) {
        const e = pick(events) as Record<string, unknown>;
        if (e && typeof e === 'object') {
          e.at = pick([-1e9, 1e15, 1e308, -0, 0.0001, Number.MAX_SAFE_INTEGER]);
          if (random() < 0.5) events.push(structuredClone(e));
          else events.reverse();
        }
      }
    }
  }
  let text = JSON.stringify(doc).replace(/"\\u0000deep:(\d+)"/g, (_, depth: string) =>
    nestedText(Number(depth)),
  );
  // Now and then the text itself is damaged.
  const damage = random();
  if (damage < 0.05) text = text.slice(0, Math.floor(random() * text.length));
  else if (damage < 0.1) {
    const at = Math.floor(random() * text.length);
    text = `${text.slice(0, at)}${String.fromCharCode(Math.floor(random() * 256))}${text.slice(at + 1)}`;
  } else if (damage < 0.12)
    text = pick(['', 'null', '[]', '{}', '"x"', '1', '{"schema":"draincheck.run/v1"}']);
  return text;
}

function checkOne(text: string, where: string): 'rendered' | 'refused' {
  let docs;
  try {
    docs = [parseRunDocument(text, 'fuzz.json')];
  } catch (error) {
    assert.ok(isDraincheckError(error), `${where}: the reader threw ${String((error as Error)?.stack)}`);
    assert.equal(error.code, 'DC_INPUT_FILE', where);
    assert.equal(error.exitCode, 2, where);
    assert.doesNotMatch(error.oneLine(), /[\n\r]/, `${where}: more than one line: ${error.oneLine()}`);
    assert.ok(
      error.oneLine().length < 2000,
      `${where}: an error line of ${error.oneLine().length} characters`,
    );
    return 'refused';
  }
  try {
    renderTextReport(docs, plainStyle);
    JSON.stringify(docs, null, 2);
    renderHtmlReport(docs, { title: 'fuzz', generatedAt: '2026-12-03T00:00:00.000Z' });
  } catch (error) {
    assert.fail(`${where}: a valid document crashed a renderer: ${String((error as Error)?.stack)}`);
  }
  return 'rendered';
}

test('a 100,000-deep object in events[].data is refused in one line; /dev/zero is refused by size', () => {
  const text = JSON.stringify(bases()[0]).replace('"data":{', `"data":{"deep":${nestedText(100_000)},`);
  assert.equal(checkOne(text, 'deep events[].data'), 'refused');
  assert.throws(
    () => parseRunDocument(text, 'deep.json'),
    /deep\.json is not a draincheck\.run\/v1 document: nested deeper than 64 levels/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-deep-'));
  try {
    writeFileSync(join(dir, 'deep.json'), text);
    for (const extra of [[], ['--json'], ['--html', join(dir, 'deep.html')]]) {
      const deep = cli(['report', join(dir, 'deep.json'), ...extra], { timeoutMs: 30_000 });
      assert.equal(deep.status, 2, deep.stderr);
      assert.match(
        deep.stderr,
        /^draincheck: \S+deep\.json is not a draincheck\.run\/v1 or draincheck\.rollout\/v1 document: nested deeper than 64 levels\n$/,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const r = cli(['report', '/dev/zero'], { timeoutMs: 30_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'draincheck: /dev/zero is larger than 64 MiB, the most a run document may be\n');
});

test('fuzz in-process: mutated and garbage run documents render or are refused in one line', (t) => {
  const seed = Number(process.env.DRAINCHECK_FUZZ_SEED ?? Date.now() % 2 ** 31);
  const random = prng(seed);
  const count = 1500;
  const deadline = Date.now() + 120_000;
  const tally = { rendered: 0, refused: 0 };
  for (let n = 0; n < count; n += 1) {
    assert.ok(Date.now() < deadline, `seed ${seed}: only ${n} of ${count} documents within the time limit`);
    const all = bases();
    const base = all[Math.floor(random() * all.length)];
    const text = mutate(random, base);
    tally[checkOne(text, `seed ${seed}, document ${n}`)] += 1;
  }
  t.diagnostic(`seed ${seed}: ${JSON.stringify(tally)}`);
  assert.ok(tally.rendered > 0 && tally.refused > 0, `seed ${seed}: ${JSON.stringify(tally)}`);
});

test('fuzz through the real CLI: report, --json and --html exit 0 or 2 with one line, never a stack trace', (t) => {
  const seed = Number(process.env.DRAINCHECK_FUZZ_SEED ?? Date.now() % 2 ** 31) + 1;
  const random = prng(seed);
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-read-fuzz-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const all = bases();
  for (let n = 0; n < 4; n += 1) {
    const file = join(dir, `doc-${n}.json`);
    writeFileSync(file, mutate(random, all[n % all.length]));
    for (const extra of [[], ['--json'], ['--html', join(dir, `out-${n}.html`)]]) {
      const r = cli(['report', file, ...extra], { timeoutMs: 60_000 });
      const where = `seed ${seed}, document ${n}, report ${extra.join(' ')}`;
      assert.ok(r.status === 0 || r.status === 2, `${where}: exit ${r.status}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, `${where}: a stack trace`);
      if (r.status === 2) assert.match(r.stderr, /^draincheck: [^\n]*\n$/, where);
    }
  }
});
