// The `rollout` kind (draincheck.rollout/v1): a rolling update of a Deployment under open-loop
// load, every request accounted for. `draincheck rollout` (src/cli/commands/rollout.ts) runs it.
import type { ExperimentKind } from '../kind.js';
import { explainFailures } from './explain.js';
import { ROLLOUT_SCHEMA, RolloutDocumentSchema, type RolloutDocument } from './document.js';
import { renderRolloutHtml } from './html.js';
import { planRollout } from './plan.js';
import { runRollout } from './run.js';
import { inRunOrder, renderRolloutText } from './text.js';

export const rolloutKind = {
  schema: ROLLOUT_SCHEMA,
  noun: 'rollout',
  documentSchema: RolloutDocumentSchema,
  plan: planRollout,
  run: runRollout,
  conclude: explainFailures,
  renderers: {
    text: (docs, { style }) => renderRolloutText(docs, style),
    json: (doc) => doc,
    html: (docs, context) => renderRolloutHtml(inRunOrder(docs), context),
  },
} satisfies ExperimentKind<RolloutDocument>;
