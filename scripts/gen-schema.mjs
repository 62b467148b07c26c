#!/usr/bin/env node
// Writes schema/run.v1.schema.json from the zod schema in src/experiment/run-document.ts and
// schema/lab.v1.schema.json (lab's summary.json) from src/report/lab-summary.ts, and
// schema/rollout.v1.schema.json from src/kinds/rollout/document.ts.
// `npm run schema` after changing either; a test fails when a file is stale.
import { writeFileSync } from 'node:fs';
import { runDocumentJsonSchema } from '../dist/src/experiment/run-document.js';
import { labSummaryJsonSchema } from '../dist/src/report/lab-summary.js';
import { rolloutDocumentJsonSchema } from '../dist/src/kinds/rollout/document.js';

for (const [file, schema] of [
  ['run.v1.schema.json', runDocumentJsonSchema()],
  ['lab.v1.schema.json', labSummaryJsonSchema()],
  ['rollout.v1.schema.json', rolloutDocumentJsonSchema()],
]) {
  writeFileSync(new URL(`../schema/${file}`, import.meta.url), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schema/${file}`);
}
