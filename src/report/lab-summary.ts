// `draincheck lab`'s summary.json (draincheck.lab/v1): one comparison row per run and the run
// document it came from. schema/lab.v1.schema.json is generated from the zod schema here
// (`npm run schema`); a test keeps it in step and validates a real lab's summary against it.
import { z } from 'zod';
import type { RunDocument } from '../experiment/run-document.js';
import { RunSummaryRowSchema, summarizeRun } from './summary.js';

export const LAB_SCHEMA = 'draincheck.lab/v1';

export const LabSummarySchema = z.object({
  schema: z.literal(LAB_SCHEMA),
  createdAt: z.string().describe('wall clock (ISO) when the lab finished'),
  runs: z.array(
    RunSummaryRowSchema.extend({
      file: z.string().describe('the run document, as a path from where draincheck ran'),
    }),
  ),
});
export type LabSummary = z.infer<typeof LabSummarySchema>;

/** The summary of a lab's runs; `files[i]` is where `docs[i]` was saved. */
export function labSummary(docs: RunDocument[], files: string[], createdAt: string): LabSummary {
  return {
    schema: LAB_SCHEMA,
    createdAt,
    runs: docs.map((d, i) => ({ file: files[i] ?? '', ...summarizeRun(d) })),
  };
}

/** The JSON Schema shipped in schema/lab.v1.schema.json. */
export function labSummaryJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://draincheck.dev/schema/lab.v1.schema.json',
    title: 'draincheck lab summary (draincheck.lab/v1)',
    ...z.toJSONSchema(LabSummarySchema, { target: 'draft-2020-12' }),
  };
}
