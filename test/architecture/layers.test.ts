// The layers only point down, and no module imports itself back through a cycle. The rank table
// below is the architecture of docs/ARCHITECTURE.md ("Layers"); a new folder under src/ must be
// given a rank here, or this test fails.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));

/** Higher imports lower; equal ranks must not import each other (except within one folder). */
export const LAYER_RANK: Record<string, number> = {
  cli: 9,
  kinds: 8, // an experiment kind: its steps (experiment) and its renderers (report) together
  report: 7,
  results: 7,
  experiment: 6,
  platform: 5,
  workload: 4,
  server: 3,
  probe: 2,
  util: 1,
  '(root)': 0, // src/errors.ts, src/version.ts
};

export type ImportGraph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Relative imports of every file under src/ (type-only imports count: they couple too). */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(join(root, 'src'))) {
    const from = relative(root, file);
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      targets.push(normalize(join(dirname(from), m[1]!)).replace(/\.js$/, '.ts'));
    }
    graph.set(from, targets);
  }
  return graph;
}

/** `src/platform/local/x.ts` → `platform`; `src/errors.ts` → `(root)`. */
export function layerOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : '(root)';
}

export function layerViolations(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    for (const to of targets) {
      const b = layerOf(to);
      const ra = LAYER_RANK[a];
      const rb = LAYER_RANK[b];
      if (ra === undefined || rb === undefined) out.push(`${from} → ${to}: layer without a rank`);
      else if (a !== b && ra <= rb) out.push(`${from} (${a}) → ${to} (${b})`);
      // The two platforms never know each other.
      else if (/^src\/platform\/(local|kube)\//.test(from) && /^src\/platform\/(local|kube)\//.test(to)) {
        if (from.split('/')[2] !== to.split('/')[2])
          out.push(`${from} → ${to}: one platform imports another`);
      }
    }
  }
  return out;
}

/** Every import cycle, as a list of files (Tarjan's strongly connected components of size > 1). */
export function importCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return cycles;
}

test('no import runs up the layers', () => {
  assert.deepEqual(layerViolations(importGraph(repo)), []);
});

test('no import cycles', () => {
  assert.deepEqual(importCycles(importGraph(repo)), []);
});

test('the checks themselves catch an upward import, a cross-platform import and a cycle', () => {
  const graph: ImportGraph = new Map([
    ['src/platform/kube/a.ts', ['src/experiment/b.ts', 'src/platform/local/c.ts']],
    ['src/experiment/b.ts', ['src/platform/kube/a.ts']],
    ['src/platform/local/c.ts', []],
    ['src/newlayer/d.ts', []],
    ['src/cli/e.ts', ['src/newlayer/d.ts']],
  ]);
  const violations = layerViolations(graph);
  assert.ok(violations.some((v) => v.startsWith('src/platform/kube/a.ts (platform) → src/experiment/b.ts')));
  assert.ok(violations.some((v) => v.includes('one platform imports another')));
  assert.ok(violations.some((v) => v.includes('layer without a rank')));
  assert.deepEqual(importCycles(graph), [['src/experiment/b.ts', 'src/platform/kube/a.ts']]);
});
