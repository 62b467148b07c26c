// Validates run documents against the shipped JSON Schema with an independent validator
// (ajv), so the schema file — not only the zod source — is what documents are held to.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const schema = JSON.parse(
  readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8'),
) as object;
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

export function assertValidRunDocument(doc: unknown): void {
  if (!validate(doc)) {
    throw new Error(
      `run document does not match schema/run.v1.schema.json: ${JSON.stringify(validate.errors?.slice(0, 5))}`,
    );
  }
}
