// The facade as an API server older than 1.30 answers a Pod or a Deployment carrying a
// preStop `sleep` handler: the field is unknown to it (LifecycleHandler.Sleep came with
// PodLifecycleSleepAction: alpha in 1.29, beta and on by default in 1.30 — KEP-3960), so
// decoding drops it and validation finds a preStop with no handler
// (pkg/apis/core/validation validateHandler: "must specify a handler type"), HTTP 422. Below
// v1.24 it answers a container probe whose only handler is `grpc` the same way: Probe.grpc came
// with GRPCContainerProbe (alpha and off in 1.23, beta and on by default in 1.24 — KEP-2727), so
// such a server keeps no handler of that probe (validateProbe → validateHandler).
import type { V1Container } from '@kubernetes/client-node';
import type { Answer, FacadeRequest } from './routes.js';

const CREATES = /\/namespaces\/([^/]+)\/(pods|deployments)$/;

function knowsSince(gitVersion: string | undefined, minor: number): boolean {
  const m = /^v(\d+)\.(\d+)/.exec(gitVersion ?? '');
  if (!m) return true;
  return Number(m[1]) > 1 || Number(m[2]) >= minor;
}
const knowsSleepAction = (gitVersion: string | undefined) => knowsSince(gitVersion, 30);
const knowsGrpcProbe = (gitVersion: string | undefined) => knowsSince(gitVersion, 24);
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/** The 422 such a server answers, or null: the request goes on to the facade's routes. */
export function refusedByVersion(gitVersion: string | undefined, req: FacadeRequest): Answer | null {
  const m = CREATES.exec(req.path);
  if (req.method !== 'POST' || !m || (knowsSleepAction(gitVersion) && knowsGrpcProbe(gitVersion)))
    return null;
  const object = req.body as {
    kind?: string;
    metadata?: { name?: string };
    spec?: { containers?: V1Container[]; template?: { spec?: { containers?: V1Container[] } } };
  };
  const template = m[2] === 'deployments';
  const containers = (template ? object.spec?.template?.spec?.containers : object.spec?.containers) ?? [];
  const required = (field: string) => ({
    reason: 'FieldValueRequired',
    message: 'Required value: must specify a handler type',
    field: `${template ? 'spec.template.' : ''}${field}`,
  });
  const causes = containers.flatMap((c, i) => {
    const out = [];
    const h = c.lifecycle?.preStop;
    // What is left of the handler once the unknown `sleep` is dropped.
    if (
      !knowsSleepAction(gitVersion) &&
      h &&
      h.exec === undefined &&
      h.httpGet === undefined &&
      h.tcpSocket === undefined
    )
      out.push(required(`spec.containers[${i}].lifecycle.preStop`));
    // And of a probe once the unknown `grpc` is dropped.
    for (const probe of PROBES) {
      const p = c[probe];
      if (knowsGrpcProbe(gitVersion) || !p || p.grpc === undefined) continue;
      if (p.exec === undefined && p.httpGet === undefined && p.tcpSocket === undefined)
        out.push(required(`spec.containers[${i}].${probe}`));
    }
    return out;
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
