// The shipped JSON Schema is the one generated from the zod schema (run `npm run schema`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runDocumentJsonSchema } from '../../src/experiment/run-document.js';

test('schema/run.v1.schema.json is up to date', () => {
  const shipped = JSON.parse(
    readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8'),
  ) as unknown;
  assert.deepEqual(shipped, runDocumentJsonSchema(), 'run `npm run schema` and commit the result');
});
