// The `run` kind (draincheck.run/v1): one Pod, one accepted request, one deletion — the kind
// `draincheck run` and `draincheck lab` produce. Its steps live in src/experiment/, its
// renderers in src/report/; this file puts them together.
import { conclude, type ConcludeInput, type Fields } from '../../experiment/conclude.js';
import { planRun, type RunPlan } from '../../experiment/plan.js';
import { runExperiment, type ExperimentOptions } from '../../experiment/protocol.js';
import { RUN_SCHEMA, RunDocumentSchema, type RunDocument } from '../../experiment/run-document.js';
import { renderHtmlReport } from '../../report/html/index.js';
import { renderTextReport } from '../../report/text.js';
import type { ExperimentKind } from '../kind.js';

export const runKind = {
  schema: RUN_SCHEMA,
  noun: 'run',
  documentSchema: RunDocumentSchema,
  plan: planRun,
  run: runExperiment,
  conclude,
  renderers: {
    text: (docs, { style }) => renderTextReport(docs, style),
    // The run document is its own JSON.
    json: (doc) => doc,
    html: (docs, { title, generatedAt }) => renderHtmlReport(docs, { title, generatedAt }),
  },
} satisfies ExperimentKind<
  RunPlan,
  RunDocument,
  Parameters<typeof planRun>,
  ExperimentOptions,
  ConcludeInput,
  Fields
>;
