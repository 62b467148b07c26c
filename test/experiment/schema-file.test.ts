// The shipped JSON Schemas are the ones generated from the zod schemas (run `npm run schema`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runDocumentJsonSchema } from '../../src/experiment/run-document.js';
import { rolloutDocumentJsonSchema } from '../../src/kinds/rollout/document.js';
import { labSummary, labSummaryJsonSchema } from '../../src/report/lab-summary.js';
import { assertValidLabSummary } from '../helpers/schema.js';
import { sampleRuns } from '../helpers/sample-runs.js';

const shipped = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../../schema/${file}`, import.meta.url), 'utf8')) as unknown;

test('schema/run.v1.schema.json is up to date', () => {
  assert.deepEqual(
    shipped('run.v1.schema.json'),
    runDocumentJsonSchema(),
    'run `npm run schema` and commit the result',
  );
});

test('schema/rollout.v1.schema.json is up to date', () => {
  assert.deepEqual(
    shipped('rollout.v1.schema.json'),
    JSON.parse(JSON.stringify(rolloutDocumentJsonSchema())),
    'run `npm run schema` and commit the result',
  );
});

test('schema/lab.v1.schema.json is up to date', () => {
  assert.deepEqual(
    shipped('lab.v1.schema.json'),
    labSummaryJsonSchema(),
    'run `npm run schema` and commit the result',
  );
});

test("a lab summary of concluded runs matches schema/lab.v1.schema.json; one missing a row's field does not", () => {
  const docs = sampleRuns();
  const summary = labSummary(
    docs,
    docs.map((d) => `out/${d.scenario.name}-${d.runId}.json`),
    '2026-12-03T00:00:00.000Z',
  );
  assertValidLabSummary(summary);
  const broken = JSON.parse(JSON.stringify(summary)) as { runs: Array<Record<string, unknown>> };
  delete broken.runs[0]!.verdict;
  assert.throws(() => assertValidLabSummary(broken), /runs\/0.*verdict/);
});
