// Label and field selectors, the subset Kubernetes clients use for one experiment:
// equality (`a=b`, `a==b`), inequality (`a!=b`), existence (`a`, `!a`), comma = AND.
// Field selectors support `metadata.name` and `metadata.namespace`, as the API does for most kinds.
import { DraincheckError } from '../../errors.js';

type Requirement = { key: string; op: '=' | '!=' | 'exists' | '!exists'; value?: string };
export type Selector = (
  labels: Record<string, string> | undefined,
  fields?: Record<string, string>,
) => boolean;

export function parseSelector(text: string | undefined): Requirement[] {
  if (!text) return [];
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
      if (m) return { key: m[1]!.trim(), op: m[2] === '!=' ? '!=' : '=', value: m[3]!.trim() };
      if (part.startsWith('!')) return { key: part.slice(1).trim(), op: '!exists' };
      if (/^[A-Za-z0-9./_-]+$/.test(part)) return { key: part, op: 'exists' };
      throw new DraincheckError('DC_USAGE', `unsupported selector ${JSON.stringify(part)}`);
    });
}

function matches(requirements: Requirement[], values: Record<string, string> | undefined): boolean {
  const v = values ?? {};
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(v, r.key);
    switch (r.op) {
      case '=':
        return has && v[r.key] === r.value;
      case '!=':
        return !has || v[r.key] !== r.value;
      case 'exists':
        return has;
      case '!exists':
        return !has;
    }
  });
}

export function compileSelectors(labelSelector?: string, fieldSelector?: string): Selector {
  const labels = parseSelector(labelSelector);
  const fields = parseSelector(fieldSelector);
  return (objectLabels, objectFields) => matches(labels, objectLabels) && matches(fields, objectFields);
}

/** Labels that select: a Service's `spec.selector` as a Selector. */
function selectorFromMap(selector: Record<string, string> | undefined): Requirement[] {
  return Object.entries(selector ?? {}).map(([key, value]) => ({ key, op: '=' as const, value }));
}

export function labelsMatch(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
) {
  // A Service without a selector selects nothing (its endpoints are managed by hand).
  if (!selector || Object.keys(selector).length === 0) return false;
  return matches(selectorFromMap(selector), labels);
}
