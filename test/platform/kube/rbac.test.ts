// deploy/rbac.yaml grants every request KubePlatform and `draincheck cleanup` make — checked
// against the requests themselves, as the fake API server saw them — and its objects are
// valid Kubernetes objects.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { planRun } from '../../../src/experiment/plan.js';
import { cleanupLeftovers } from '../../../src/platform/kube/cleanup.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { recordedRun, sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { serveRun } from '../../helpers/fake-apiserver/replay.js';
import { isList, isWatch, type SeenRequest } from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { modelErrors, modelFor } from '../../helpers/k8s-models.js';
import { fakeKube, readAll, readUntil } from '../../helpers/kube-platform.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
type Doc = { apiVersion: string; kind: string; metadata: { name: string }; rules?: Rule[] };

const docs = parseAllDocuments(
  readFileSync(new URL('../../../../deploy/rbac.yaml', import.meta.url), 'utf8'),
).map((d) => d.toJS() as Doc);
const rulesOf = (name: string) =>
  docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === name)?.rules ?? [];

/** A request as RBAC sees it: verb, API group, resource (with subresource). */
function rbacAttributes(r: SeenRequest): { verb: string; group: string; resource: string } | null {
  const m =
    /^\/(?:api\/v1|apis\/([^/]+)\/v1)(?:\/namespaces\/([^/]+))?(?:\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?)?$/.exec(
      r.path,
    );
  if (!m) return null; // /version: a non-resource URL every authenticated user may read
  const [, group = '', namespace, collection, name, sub] = m;
  // /api/v1/namespaces/<name> is the namespace itself, not a namespaced collection.
  const resource = collection ?? (namespace ? 'namespaces' : '');
  const item = collection ? name : namespace;
  const verb =
    r.method === 'POST'
      ? 'create'
      : r.method === 'DELETE'
        ? 'delete'
        : item
          ? 'get'
          : isWatch(r)
            ? 'watch'
            : 'list';
  return { verb, group, resource: sub ? `${resource}/${sub}` : resource };
}

function denied(requests: SeenRequest[], rules: Rule[]): string[] {
  return requests.flatMap((r) => {
    const a = rbacAttributes(r);
    if (!a) return [];
    const ok = rules.some(
      (rule) =>
        rule.apiGroups.includes(a.group) &&
        rule.resources.includes(a.resource) &&
        rule.verbs.includes(a.verb),
    );
    return ok ? [] : [`${a.verb} ${a.group || 'core'}/${a.resource} (${r.method} ${r.path})`];
  });
}

test('deploy/rbac.yaml: valid objects of the client-node models', () => {
  assert.deepEqual(
    docs.map((d) => `${d.kind} ${d.metadata.name}`),
    [
      'ClusterRole draincheck',
      'ClusterRole draincheck-in-namespace',
      'ServiceAccount draincheck',
      'ClusterRoleBinding draincheck',
    ],
  );
  for (const d of docs) assert.deepEqual(modelErrors(d, modelFor(d)), [], `${d.kind} ${d.metadata.name}`);
});

for (const mode of ['own namespace', '--namespace'] as const) {
  test(`deploy/rbac.yaml grants every request of a whole run and of cleanup (${mode})`, async (t) => {
    const run = recordedRun('drain');
    const own = mode === 'own namespace';
    const { platform, server, signal } = await fakeKube(
      t,
      (s) => {
        serveSetup(s);
        serveRun(s, run);
        s.on(
          'GET',
          '/api/v1/namespaces',
          (_r, res) =>
            sendJson(res, 200, {
              kind: 'NamespaceList',
              apiVersion: 'v1',
              metadata: { resourceVersion: '900' },
              items: [{ metadata: { name: 'draincheck-r1' } }],
            }),
          isList,
        );
        s.on(
          'GET',
          /^\/api\/v1\/namespaces\/[^/]+\/services$/,
          (_r, res) =>
            sendJson(res, 200, {
              kind: 'ServiceList',
              apiVersion: 'v1',
              metadata: { resourceVersion: '900' },
              items: [{ metadata: { name: 'work-r1' } }],
            }),
          isList,
        );
      },
      { namespace: own ? undefined : 'lab', keep: false },
    );
    const workload = planRun(
      resolveScenario({}),
      own ? { runId: 'r1' } : { runId: 'r1', namespace: 'lab' },
    ).workload;
    const { namespace } = workload;
    await platform.prepare(workload, signal);
    await readUntil(platform.watchPod(namespace, 'work', signal), (e) => e.type === 'DELETED', 'pods');
    await readUntil(
      platform.watchEndpointSlices(namespace, 'work', signal),
      (_e, all) => all.length === 2,
      'slices',
    );
    await readUntil(platform.platformEvents(signal), (_e, all) => all.length === 2, 'events');
    // The recorded Pod's container is `work`, not the workload's `server`: follow it by a name
    // that is not the workload's, so the container name is read from the Pod.
    await readAll(platform.followLog(namespace, 'recorded-work', signal), 'log');
    await platform.deletePod(namespace, 'work', { gracePeriodSeconds: 5 });
    await readAll(platform.runClient(planRun(resolveScenario({}), { runId: 'r1' }).client, signal), 'client');
    await platform.dispose();
    await cleanupLeftovers(platform.resources, own ? {} : { namespace });

    const seen = new Set(server.requests.map((r) => JSON.stringify(rbacAttributes(r))));
    assert.ok(seen.size >= 10, `a representative set of requests (${seen.size})`);
    assert.deepEqual(denied(server.requests, rulesOf(own ? 'draincheck' : 'draincheck-in-namespace')), []);
    assert.equal(
      denied(server.requests, []).length,
      server.requests.filter((r) => r.path !== '/version').length,
      'the check can fail',
    );
    for (const needed of [
      'watch core/pods',
      'get core/pods/log',
      'watch discovery.k8s.io/endpointslices',
      'watch core/events',
      'delete core/pods',
      'create core/services',
    ]) {
      assert.ok(
        denied(server.requests, []).some((d) => d.startsWith(needed)),
        `${needed} was exercised`,
      );
    }
    if (!own) {
      assert.ok(
        !server.requests.some(
          (r) =>
            /^\/api\/v1\/namespaces\/?$/.test(r.path) ||
            (r.method !== 'GET' && /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)),
        ),
        'no namespace is listed, created or deleted',
      );
    }
  });
}
