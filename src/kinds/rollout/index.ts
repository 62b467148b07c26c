// The `rollout` kind (draincheck.rollout/v1): a rolling update of a Deployment under open-loop
// load, every request accounted for. `draincheck rollout` (src/cli/commands/rollout.ts) runs it.
import type { ExperimentKind } from '../kind.js';
import { concludeRollout, type RolloutFacts } from './explain.js';
import { ROLLOUT_SCHEMA, RolloutDocumentSchema, type RolloutDocument } from './document.js';
import { renderRolloutHtml } from './render/html.js';
import { planRollout } from './plan.js';
import { runRollout, type RolloutInput, type RolloutPlan } from './run.js';
import { renderRolloutText } from './render/text.js';

export const rolloutKind = {
  schema: ROLLOUT_SCHEMA,
  noun: 'rollout',
  documentSchema: RolloutDocumentSchema,
  plan: planRollout,
  run: runRollout,
  conclude: concludeRollout,
  renderers: {
    text: (docs, { style }) => renderRolloutText(docs, style),
    json: (doc) => doc,
    html: (docs, context) => renderRolloutHtml(docs, context),
  },
} satisfies ExperimentKind<
  RolloutPlan,
  RolloutDocument,
  Parameters<typeof planRollout>,
  RolloutInput,
  RolloutFacts,
  string
>;
