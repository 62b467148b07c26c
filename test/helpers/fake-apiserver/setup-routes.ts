// Answers to the calls `prepare()` makes. The recordings hold the Pod create response and
// the stored Service; /version and the Namespace create response were not recorded, so they
// are built here in the shapes of the API reference (version.Info; Namespace with
// status.phase Active), with the version the recording README reports.
import type { V1Pod } from '@kubernetes/client-node';
import { quotaRefusal } from '../pod-security.js';
import type { FakeApiServer, SeenRequest } from './server.js';
import { fixture, sendJson } from './recorded.js';

export const recordedVersion = {
  major: '1',
  minor: '24+',
  gitVersion: 'v1.24.0-alpha.1',
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '2021-12-01T00:00:00Z',
  goVersion: 'go1.19.8',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function namespaceCreated(req: SeenRequest): Record<string, unknown> {
  const body = JSON.parse(req.body) as { metadata: Record<string, unknown> };
  return {
    ...body,
    metadata: {
      ...body.metadata,
      uid: '00000000-0000-4000-8000-000000000001',
      resourceVersion: '400',
      creationTimestamp: '2026-12-02T14:00:00Z',
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

export interface SetupOptions {
  /** Refuse this many Pod creations the way a brand-new namespace does (no default ServiceAccount yet). */
  serviceAccountMissing?: number;
  /** The namespace has a ResourceQuota on cpu and memory: Pods without requests/limits are refused. */
  quota?: boolean;
}

export function serveSetup(server: FakeApiServer, options: SetupOptions = {}): void {
  let refusals = options.serviceAccountMissing ?? 0;
  server
    .on('GET', '/version', (_r, res) => sendJson(res, 200, recordedVersion))
    .on('POST', '/api/v1/namespaces', (req, res) => sendJson(res, 201, namespaceCreated(req)))
    .on('DELETE', /^\/api\/v1\/namespaces\/[^/]+$/, (req, res) =>
      sendJson(res, 200, {
        ...namespaceCreated({ ...req, body: '{"metadata":{}}' }),
        status: { phase: 'Terminating' },
      }),
    )
    .on('POST', /^\/api\/v1\/namespaces\/[^/]+\/services$/, (_r, res) =>
      sendJson(res, 201, fixture('drain/service.get.json')),
    )
    .on('DELETE', /^\/api\/v1\/namespaces\/[^/]+\/services\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, fixture('drain/service.get.json')),
    )
    .on('POST', /^\/api\/v1\/namespaces\/[^/]+\/pods$/, (req, res) => {
      const quota = options.quota ? quotaRefusal(JSON.parse(req.body) as V1Pod) : null;
      if (quota) {
        // The ResourceQuota admission plugin's refusal: 403 Forbidden with its message.
        return sendJson(res, 403, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: quota,
          reason: 'Forbidden',
          details: { kind: 'pods' },
          code: 403,
        });
      }
      if (refusals-- > 0) {
        const ns = req.path.split('/')[4] ?? '';
        // The ServiceAccount admission plugin's refusal (k8s.io/apiserver admission.NewForbidden).
        return sendJson(res, 403, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `pods "work" is forbidden: error looking up service account ${ns}/default: serviceaccount "default" not found`,
          reason: 'Forbidden',
          details: { name: 'work', kind: 'pods' },
          code: 403,
        });
      }
      sendJson(res, 201, fixture('drain/pod-create.response.json'));
    });
}
