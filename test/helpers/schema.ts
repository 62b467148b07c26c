// Validates run documents and lab summaries against the shipped JSON Schemas with an independent
// validator (ajv), so the schema files — not only the zod source — are what documents are held to.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const compile = (file: string) =>
  new Ajv2020({ strict: false, allErrors: true }).compile(
    JSON.parse(readFileSync(new URL(`../../../schema/${file}`, import.meta.url), 'utf8')) as object,
  );
const validateRun = compile('run.v1.schema.json');
const validateLab = compile('lab.v1.schema.json');

export function assertValidRunDocument(doc: unknown): void {
  if (!validateRun(doc)) {
    throw new Error(
      `run document does not match schema/run.v1.schema.json: ${JSON.stringify(validateRun.errors?.slice(0, 5))}`,
    );
  }
}

/** `draincheck lab`'s summary.json against schema/lab.v1.schema.json. */
export function assertValidLabSummary(summary: unknown): void {
  if (!validateLab(summary)) {
    throw new Error(
      `lab summary does not match schema/lab.v1.schema.json: ${JSON.stringify(validateLab.errors?.slice(0, 5))}`,
    );
  }
}

const validateRollout = compile('rollout.v1.schema.json');

/** A `draincheck rollout` document against schema/rollout.v1.schema.json. */
export function assertValidRolloutDocument(doc: unknown): void {
  if (!validateRollout(doc)) {
    throw new Error(
      `rollout document does not match schema/rollout.v1.schema.json: ${JSON.stringify(validateRollout.errors?.slice(0, 5))}`,
    );
  }
}
