// The facade as an API server older than 1.30 answers a Pod or a Deployment carrying a
// preStop `sleep` handler: the field is unknown to it (LifecycleHandler.Sleep came with
// PodLifecycleSleepAction: alpha in 1.29, beta and on by default in 1.30 — KEP-3960), so
// decoding drops it and validation finds a preStop with no handler
// (pkg/apis/core/validation validateHandler: "must specify a handler type"), HTTP 422.
import type { V1Container } from '@kubernetes/client-node';
import type { Answer, FacadeRequest } from './routes.js';

const CREATES = /\/namespaces\/([^/]+)\/(pods|deployments)$/;

function knowsSleepAction(gitVersion: string | undefined): boolean {
  const m = /^v(\d+)\.(\d+)/.exec(gitVersion ?? '');
  if (!m) return true;
  return Number(m[1]) > 1 || Number(m[2]) >= 30;
}

/** The 422 such a server answers, or null: the request goes on to the facade's routes. */
export function refusedByVersion(gitVersion: string | undefined, req: FacadeRequest): Answer | null {
  const m = CREATES.exec(req.path);
  if (req.method !== 'POST' || !m || knowsSleepAction(gitVersion)) return null;
  const object = req.body as {
    kind?: string;
    metadata?: { name?: string };
    spec?: { containers?: V1Container[]; template?: { spec?: { containers?: V1Container[] } } };
  };
  const template = m[2] === 'deployments';
  const containers = (template ? object.spec?.template?.spec?.containers : object.spec?.containers) ?? [];
  const causes = containers.flatMap((c, i) => {
    const h = c.lifecycle?.preStop;
    // What is left of the handler once the unknown `sleep` is dropped.
    if (!h || h.exec !== undefined || h.httpGet !== undefined || h.tcpSocket !== undefined) return [];
    const field = `${template ? 'spec.template.' : ''}spec.containers[${i}].lifecycle.preStop`;
    return [{ reason: 'FieldValueRequired', message: 'Required value: must specify a handler type', field }];
  });
  if (causes.length === 0) return null;
  const kind = object.kind ?? (template ? 'Deployment' : 'Pod');
  const name = object.metadata?.name ?? '';
  return {
    kind: 'json',
    status: 422,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `${kind} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
      reason: 'Invalid',
      details: { name, group: template ? 'apps' : '', kind: template ? 'deployments' : 'pods', causes },
      code: 422,
    },
  };
}
