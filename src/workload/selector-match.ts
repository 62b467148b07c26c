// Whether a label selector selects a set of labels, as the API server and the controllers
// decide it (k8s.io/apimachinery/pkg/apis/meta/v1 LabelSelectorAsSelector; a Service's map
// selector: k8s.io/apimachinery/pkg/labels SelectorFromSet). Used to prove that a copy of the
// user's Pod (`--from`) carries labels none of their controllers or Services select.
import type { V1LabelSelector } from '@kubernetes/client-node';

type Labels = Record<string, string>;

/**
 * A workload's LabelSelector (Deployment, ReplicaSet): matchLabels AND every matchExpression.
 * An empty selector selects everything (metav1: "An empty label selector matches all objects");
 * a null one selects nothing.
 */
export function labelSelectorMatches(selector: V1LabelSelector | null | undefined, labels: Labels): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        // An operator the API server would have refused: treat it as selecting, so the copy is refused.
        return true;
    }
  }
  return true;
}

/**
 * A Service's selector: every key equal. A Service without a selector (or an empty one) gets
 * no endpoints from the EndpointSlice controller: it selects no Pod.
 */
export function serviceSelectorMatches(selector: Labels | null | undefined, labels: Labels): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}
