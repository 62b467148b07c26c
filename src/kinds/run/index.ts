// The `run` kind (draincheck.run/v1): one Pod, one accepted request, one deletion — the kind
// `draincheck run` and `draincheck lab` produce. Its steps live in src/experiment/, its
// renderers in src/report/; this file puts them together.
import { conclude, type ConcludeInput, type Fields } from '../../experiment/conclude.js';
import { planRun, type RunPlan } from '../../experiment/plan.js';
import { runExperiment, type ExperimentOptions } from '../../experiment/protocol.js';
import { RUN_SCHEMA, RunDocumentSchema, type RunDocument } from '../../experiment/run-document.js';
import type { ExperimentKind } from '../kind.js';

// The reports' modules (the page alone is ~30) load when first rendered, not with the run: a
// command's start is ahead of its run's, and `lab` loads them while its runs wait (issue 22).
export const loadRunReports = () =>
  Promise.all([import('../../report/text.js'), import('../../report/html/index.js')]);

export const runKind = {
  schema: RUN_SCHEMA,
  noun: 'run',
  documentSchema: RunDocumentSchema,
  plan: planRun,
  run: runExperiment,
  conclude,
  renderers: {
    text: async (docs, { style }) => (await loadRunReports())[0].renderTextReport(docs, style),
    // The run document is its own JSON.
    json: (doc) => doc,
    html: async (docs, { title, generatedAt }) =>
      (await loadRunReports())[1].renderHtmlReport(docs, { title, generatedAt }),
  },
} satisfies ExperimentKind<
  RunPlan,
  RunDocument,
  Parameters<typeof planRun>,
  ExperimentOptions,
  ConcludeInput,
  Fields
>;
