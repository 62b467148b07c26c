#!/usr/bin/env node
// Writes schema/run.v1.schema.json from the zod schema in src/experiment/run-document.ts.
// `npm run schema` after changing the run document; a test fails when the file is stale.
import { writeFileSync } from 'node:fs';
import { runDocumentJsonSchema } from '../dist/src/experiment/run-document.js';

writeFileSync(
  new URL('../schema/run.v1.schema.json', import.meta.url),
  `${JSON.stringify(runDocumentJsonSchema(), null, 2)}\n`,
);
console.log('wrote schema/run.v1.schema.json');
