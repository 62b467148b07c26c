// `draincheck report` reads a document's kind (its `schema` string) first and hands it to that
// kind's schema and renderers: the run kind's documents render as they always did, another
// registered kind renders through its own renderers, an unknown kind is one line (exit 2).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { DraincheckError, ExitCode, isDraincheckError } from '../../src/errors.js';
import type { ExperimentKind } from '../../src/kinds/kind.js';
import { readDocuments, renderDocuments } from '../../src/kinds/read.js';
import { experimentKinds, registerKind } from '../../src/kinds/registry.js';
import { runKind } from '../../src/kinds/run/index.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { plainStyle } from '../../src/report/style.js';
import { renderTextReport } from '../../src/report/text.js';
import { sampleRuns } from '../helpers/sample-runs.js';

const context = { style: plainStyle, title: 't', generatedAt: '2026-12-03T00:00:00.000Z' };

/** A kind of this test's own, as a rollout kind would be registered. */
const PingSchema = z.object({ schema: z.literal('draincheck.ping/v1'), pings: z.number().int() });
const pingKind = {
  schema: 'draincheck.ping/v1',
  noun: 'ping',
  documentSchema: PingSchema,
  plan: () => ({ pings: 0 }),
  run: ({ plan }: { plan: { pings: number } }) =>
    Promise.resolve({ schema: 'draincheck.ping/v1' as const, pings: plan.pings }),
  conclude: (pings: number) => `${pings} pings`,
  renderers: {
    text: (docs) => docs.map((d) => `ping x${d.pings}`).join('\n'),
    json: (doc) => ({ ping: doc.pings }),
    html: (docs) => `<p>${docs.length} pings</p>`,
  },
} satisfies ExperimentKind<
  { pings: number },
  z.infer<typeof PingSchema>,
  [],
  { plan: { pings: number } },
  number,
  string
>;

async function withFiles(
  docs: Record<string, unknown>,
  body: (dir: string) => void | Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dc-kinds-'));
  try {
    for (const [name, doc] of Object.entries(docs)) writeFileSync(join(dir, name), JSON.stringify(doc));
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the registry knows draincheck.run/v1 and draincheck.rollout/v1, and the run renderers are the reports of today', async () => {
  assert.deepEqual(
    experimentKinds.map((k) => k.schema),
    ['draincheck.run/v1', 'draincheck.rollout/v1'],
  );
  const docs = sampleRuns();
  await withFiles(Object.fromEntries(docs.map((d) => [`${d.scenario.name}.json`, d])), async (dir) => {
    const read = readDocuments([dir]);
    assert.deepEqual(
      read.map((r) => r.kind.schema),
      ['draincheck.run/v1', 'draincheck.run/v1', 'draincheck.run/v1'],
    );
    // Files are read in name order: default, drain, exit.
    const byName = [...docs].sort((a, b) => a.scenario.name.localeCompare(b.scenario.name));
    assert.equal(await renderDocuments(read, 'text', context), renderTextReport(byName, plainStyle));
    assert.equal(await renderDocuments(read, 'json', context), JSON.stringify(byName, null, 2));
    assert.equal(await renderDocuments(read, 'html', context), renderHtmlReport(byName, context));
    assert.equal(runKind.renderers.json(docs[0]!), docs[0]);
  });
});

test('another kind dispatches to its own schema and renderers; text shows each kind in turn', async () => {
  const kinds = [...experimentKinds, registerKind(pingKind)];
  const run = sampleRuns()[0]!;
  await withFiles({ 'a.json': { schema: 'draincheck.ping/v1', pings: 3 }, 'b.json': run }, async (dir) => {
    const read = readDocuments([dir], kinds);
    assert.deepEqual(
      read.map((r) => r.kind.noun),
      ['ping', 'run'],
    );
    assert.equal(
      await renderDocuments(read, 'text', context),
      `ping x3\n\n${renderTextReport([run], plainStyle)}`,
    );
    assert.deepEqual(JSON.parse(await renderDocuments(read, 'json', context)), [
      { ping: 3 },
      JSON.parse(JSON.stringify(run)),
    ]);
    await assert.rejects(
      () => renderDocuments(read, 'html', context),
      (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && /one kind/.test(e.message),
    );
    assert.equal(await renderDocuments([read[0]!], 'html', context), '<p>1 pings</p>');
  });
  // Its own schema holds its documents: a bad field is named.
  await withFiles({ 'a.json': { schema: 'draincheck.ping/v1', pings: 1.5 } }, (dir) => {
    assert.throws(
      () => readDocuments([dir], kinds),
      (e: unknown) =>
        e instanceof DraincheckError &&
        e.code === 'DC_INPUT_FILE' &&
        /a\.json is not a draincheck\.ping\/v1 document: pings: /.test(e.message),
    );
  });
});

test('an unknown kind is one line naming it and the known ones (DC_INPUT_FILE, exit 2)', async () => {
  await withFiles({ 'x.json': { schema: 'draincheck.other/v9\u001b[2J', requests: [] } }, (dir) => {
    assert.throws(
      () => readDocuments([dir]),
      (e: unknown) =>
        e instanceof DraincheckError &&
        e.code === 'DC_INPUT_FILE' &&
        e.exitCode === ExitCode.usage &&
        !e.message.includes('\n') &&
        e.message.endsWith(
          'x.json is not a draincheck.run/v1 or draincheck.rollout/v1 document: schema: unknown kind "draincheck.other/v9\\u001b[2J"',
        ),
    );
  });
  // Without a schema string the document is held to the run kind, naming the field as before.
  await withFiles({ 'x.json': { runId: 'r1' } }, (dir) => {
    assert.throws(() => readDocuments([dir]), /x\.json is not a draincheck\.run\/v1 document: schema: /);
  });
});
