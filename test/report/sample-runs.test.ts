// The sample runs the report tests render are valid run documents: they pass the shipped JSON
// Schema (ajv, draft 2020-12) and the zod schema, and are shaped like real runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import { RunDocumentSchema, type RunDocument } from '../../src/experiment/run-document.js';
import { sampleRuns } from '../helpers/sample-runs.js';
import { hostileRun, interruptedRun, runWithoutEndpointSlices } from '../helpers/sample-variants.js';

const schema = JSON.parse(
  readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
// ajv is CommonJS: under NodeNext its class is the module's `default` export property.
const validate = new Ajv2020.default({ allErrors: true, strict: false }).compile(schema);

const all = (): Array<[string, RunDocument]> => [
  ...sampleRuns().map((d): [string, RunDocument] => [d.scenario.name, d]),
  ['interrupted', interruptedRun()],
  ['hostile', hostileRun()],
  ['without endpoint slices', runWithoutEndpointSlices()],
];

test('every sample run validates against schema/run.v1.schema.json and the zod schema', () => {
  for (const [name, doc] of all()) {
    const json = JSON.parse(JSON.stringify(doc)) as unknown;
    assert.ok(validate(json), `${name}: ${JSON.stringify(validate.errors, null, 2)}`);
    assert.doesNotThrow(() => RunDocumentSchema.parse(json), name);
  }
});

test('the three lab runs have realistic event counts, ordered events and known evidence', () => {
  const runs = sampleRuns();
  assert.deepEqual(
    runs.map((d) => [d.scenario.name, d.verdict.kind, d.exit.code]),
    [
      ['exit', 'accepted-request-cut', 0],
      ['drain', 'accepted-request-finished', 0],
      ['default', 'accepted-request-finished', 137],
    ],
  );
  for (const doc of runs) {
    assert.ok(
      doc.events.length >= 60 && doc.events.length <= 120,
      `${doc.scenario.name}: ${doc.events.length}`,
    );
    doc.events.forEach((e, i) => {
      assert.equal(e.id, `e${i + 1}`);
      if (i > 0) assert.ok(e.at >= doc.events[i - 1]!.at, `${e.id} is in time order`);
    });
    const ids = new Set(doc.events.map((e) => e.id));
    for (const id of doc.verdict.evidence) assert.ok(ids.has(id), `evidence ${id} exists`);
    assert.ok(ids.has(doc.firstTerminatingEndpoint.eventId ?? ''), 'the first terminating event exists');
  }
});

test('timings follow the recorded cluster: terminating ~100 ms after the DELETE, SIGTERM ~100 ms after it', () => {
  for (const doc of sampleRuns()) {
    const deleteAt = doc.deletion.at!;
    const terminatingAfter = doc.firstTerminatingEndpoint.at! - deleteAt;
    assert.ok(
      terminatingAfter >= 93 && terminatingAfter <= 214,
      `${doc.scenario.name}: ${terminatingAfter} ms`,
    );
    const sigterm = doc.events.find((e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM')!;
    assert.equal(sigterm.at - deleteAt, 100);
    assert.ok(doc.acceptance.at! < deleteAt, 'acceptance is proven before the DELETE');
  }
});
