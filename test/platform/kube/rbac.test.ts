// deploy/rbac-namespaced.yaml and deploy/rbac-cluster.yaml grant every request KubePlatform,
// its heartbeat and `draincheck cleanup` make in their mode — checked against the requests
// themselves, as the fake API server saw them — and nothing more (every grant is used);
// deploy/admission-policy.yaml guards the identity rbac-cluster.yaml binds. All are valid
// Kubernetes objects.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { planRun } from '../../../src/experiment/plan.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import { LocalCluster } from '../../../src/platform/local/cluster.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { openKubeSession } from '../../../src/platform/kube/session.js';
import { startKubeFacade } from '../../helpers/kube-facade/facade.js';
import { cleanupLeftovers } from '../../../src/platform/kube/cleanup.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { recordedRun, sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { serveRun } from '../../helpers/fake-apiserver/replay.js';
import {
  isList,
  isWatch,
  type SeenRequest,
  serveNamespaceList,
} from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { ingressBackends, startHostRouter } from '../../helpers/host-router.js';
import { findNginx } from '../../../src/platform/local/l7-proxy.js';
import { namespaceObject } from '../../../src/platform/kube/names.js';
import { modelErrors, modelFor } from '../../helpers/k8s-models.js';
import {
  fakeKube,
  readAll,
  readUntil,
  prepare,
  watchPod,
  watchSlices,
  clientJob,
} from '../../helpers/kube-platform.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
  spec?: Record<string, unknown>;
}

const deployFile = (name: string): Doc[] =>
  parseAllDocuments(readFileSync(new URL(`../../../../deploy/${name}`, import.meta.url), 'utf8')).map(
    (d) => d.toJS() as Doc,
  );
const files = {
  namespaced: deployFile('rbac-namespaced.yaml'),
  cluster: deployFile('rbac-cluster.yaml'),
  policy: deployFile('admission-policy.yaml'),
  from: deployFile('rbac-from.yaml'),
};
const find = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
/** The namespace the namespaced mode runs in: the one rbac-namespaced.yaml creates. */
const labNamespace = find(files.namespaced, 'Namespace')[0]?.metadata.name ?? '';
const modes = {
  namespaced: { rules: find(files.namespaced, 'Role')[0]?.rules ?? [], namespace: labNamespace },
  'own namespace': { rules: find(files.cluster, 'ClusterRole')[0]?.rules ?? [], namespace: undefined },
};

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
      : r.method === 'PATCH'
        ? 'patch'
        : r.method === 'DELETE'
          ? 'delete'
          : item
            ? 'get'
            : isWatch(r)
              ? 'watch'
              : 'list';
  return { verb, group, resource: sub ? `${resource}/${sub}` : resource };
}

/**
 * The requests of a whole `draincheck rollout --platform kube` (a Deployment, its restart,
 * the load Pod, the end), as the API facade over the embedded runtime saw them.
 */
async function rolloutRequests(t: TestContext, namespace: string | undefined): Promise<SeenRequest[]> {
  const cluster = new LocalCluster({ timing: fastTiming });
  if (namespace) cluster.createNamespace({ metadata: { name: namespace } });
  const facade = await startKubeFacade(cluster);
  // Through an ingress of the test's (--ingress-url): the run's Ingress object is created and
  // deleted as on a cluster with the user's ingress controller.
  const router = await startHostRouter(ingressBackends(cluster));
  const out = mkdtempSync(join(tmpdir(), 'draincheck-rbac-rollout-'));
  t.after(async () => {
    await router.stop();
    await facade.stop();
    await cluster.dispose();
    rmSync(out, { recursive: true, force: true });
  });
  const session = openKubeSession({ kubeconfig: facade.writeKubeconfig(), namespace });
  const rollout = (
    onSigterm: 'drain' | 'exit',
    path: { ingress: 'none' | 'nginx'; ingressUrl: string | null },
  ) =>
    rolloutKind.run({
      platform: session.newPlatform(),
      plan: rolloutKind.plan(resolveScenario({ onSigterm, graceSeconds: 5 }), {
        deployment: { replicas: 1, maxSurge: 1, maxUnavailable: 0, progressDeadlineSeconds: 60 },
        load: {
          rate: 20,
          connections: 4,
          protocol: 'http1',
          workMs: { kind: 'fixed', ms: 50 },
          loadPods: 1,
          beforeMs: 300,
          afterMs: 300,
          gzip: false,
          pool: 'lifo',
          idleTimeoutMs: 5000,
          retryReused: false,
          retry: 'none' as const,
          retryAttempts: 3,
          retryBackoffMs: 100,
          postShare: 0,
          wsReconnect: 'backoff',
          ingress: path.ingress,
          ingressSyncMs: 0,
          lbDeregistrationMs: 0,
          ingressRetryNonIdempotent: false,
          ingressUpstreamKeepaliveTimeoutMs: 60_000,
          ingressUrl: path.ingressUrl,
          ingressClass: path.ingressUrl === null ? null : 'nginx',
        },
        manifest: session.planOptions.manifest ?? {},
        ...(namespace ? { namespace } : {}),
      }),
      outDir: out,
      signal: new AbortController().signal,
    });
  const doc = await rollout('drain', { ingress: 'none', ingressUrl: router.url });
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.ok(doc.totals.requests > 0);
  assert.equal(doc.ingress?.kind, 'url');
  // draincheck's own nginx on the cluster (--ingress nginx): its Deployment and Service, its Pod's log.
  if (findNginx() !== null) {
    const behindNginx = await rollout('exit', { ingress: 'nginx', ingressUrl: null });
    assert.equal(behindNginx.complete, true, behindNginx.incompleteReason ?? '');
    assert.equal(behindNginx.ingress?.upstream, 'service-cluster-ip');
  }
  return facade.requests.map((r) => ({
    method: r.method,
    path: r.path,
    query: new URLSearchParams(r.query),
    headers: {},
    body: '',
  }));
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

/** Every (verb, group, resource) a set of rules grants, as `verb group/resource`. */
function granted(rules: Rule[]): string[] {
  return rules.flatMap((r) =>
    r.apiGroups.flatMap((g) =>
      r.resources.flatMap((res) => r.verbs.map((v) => `${v} ${g || 'core'}/${res}`)),
    ),
  );
}

test('deploy/: four files of valid objects, each saying what it is for', () => {
  const names = (docs: Doc[]) =>
    docs.map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name}`);
  assert.deepEqual(names(files.namespaced), [
    'Namespace /draincheck',
    'Role draincheck/draincheck',
    'RoleBinding draincheck/draincheck',
  ]);
  assert.deepEqual(names(files.cluster), [
    'ClusterRole /draincheck-cluster',
    'ClusterRoleBinding /draincheck-cluster',
  ]);
  assert.deepEqual(names(files.policy), [
    'ValidatingAdmissionPolicy /draincheck-own-namespaces',
    'ValidatingAdmissionPolicyBinding /draincheck-own-namespaces',
    'ValidatingAdmissionPolicy /draincheck-from-copies',
    'ValidatingAdmissionPolicyBinding /draincheck-from-copies',
  ]);
  assert.deepEqual(names(files.from), ['Role shop/draincheck-from', 'RoleBinding shop/draincheck-from']);
  for (const d of [...files.namespaced, ...files.cluster, ...files.policy, ...files.from]) {
    assert.deepEqual(modelErrors(d, modelFor(d)), [], `${d.kind} ${d.metadata.name}`);
  }
});

test('deploy/: no ServiceAccount, nothing bound in `default`, no wildcard, no ClusterRole for the namespaced mode', () => {
  const all = [...files.namespaced, ...files.cluster, ...files.policy, ...files.from];
  assert.equal(find(all, 'ServiceAccount').length, 0);
  for (const d of all) {
    assert.notEqual(d.metadata.namespace, 'default', `${d.kind} ${d.metadata.name}`);
    for (const s of d.subjects ?? []) assert.notEqual(s.namespace, 'default');
    for (const r of d.rules ?? []) {
      assert.ok(
        ![...r.verbs, ...r.resources, ...r.apiGroups].includes('*'),
        `no wildcard in ${d.metadata.name}`,
      );
    }
  }
  assert.deepEqual(
    files.namespaced.filter((d) => d.kind.startsWith('Cluster')),
    [],
    'the namespaced mode grants nothing at cluster scope',
  );
  const binding = find(files.namespaced, 'RoleBinding')[0] as Doc & { roleRef: { kind: string } };
  assert.equal(binding.roleRef.kind, 'Role');
});

test('deploy/admission-policy.yaml binds the identity rbac-cluster.yaml grants, and guards namespaces, Pods, Services, Deployments and Ingresses', () => {
  const policy = find(files.policy, 'ValidatingAdmissionPolicy')[0]?.spec as {
    failurePolicy: string;
    matchConstraints: { resourceRules: Array<{ operations: string[]; resources: string[] }> };
    matchConditions: Array<{ expression: string }>;
    validations: Array<{ expression: string }>;
  };
  const group = find(files.cluster, 'ClusterRoleBinding')[0]?.subjects?.[0];
  assert.equal(group?.kind, 'Group');
  assert.deepEqual(
    policy.matchConditions.map((c) => c.expression),
    [`'${group?.name}' in request.userInfo.groups`],
    'the policy matches exactly the subject of the ClusterRoleBinding',
  );
  assert.equal(policy.failurePolicy, 'Fail');
  const rule = policy.matchConstraints.resourceRules[0];
  assert.deepEqual(rule?.operations, ['CREATE', 'UPDATE', 'DELETE']);
  assert.deepEqual(rule?.resources, ['namespaces', 'pods', 'services']);
  // `draincheck rollout`'s Deployment: created, patched (an UPDATE) and deleted under the same rule.
  const apps = policy.matchConstraints.resourceRules[1] as
    { apiGroups: string[]; operations: string[]; resources: string[] } | undefined;
  assert.deepEqual(apps, {
    apiGroups: ['apps'],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: ['deployments'],
  });
  // `rollout --ingress-url`'s Ingress, under the same rule.
  assert.deepEqual(policy.matchConstraints.resourceRules[2], {
    apiGroups: ['networking.k8s.io'],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: ['ingresses'],
  });
  const label = "labels['app.kubernetes.io/managed-by'] == 'draincheck'";
  const [created, before, inside] = policy.validations.map((v) => v.expression.replace(/\s+/g, ' '));
  assert.match(
    created ?? '',
    new RegExp(`request.operation == 'DELETE' \\|\\| .*object\\.metadata\\.${esc(label)}`),
  );
  assert.match(
    before ?? '',
    new RegExp(`request.operation == 'CREATE' \\|\\| .*oldObject\\.metadata\\.${esc(label)}`),
  );
  assert.match(inside ?? '', new RegExp(`namespaceObject\\.metadata\\.${esc(label)}`));
  // A namespace it creates or changes must enforce Pod Security "restricted": else the identity
  // could label its own namespace privileged and start privileged Pods there.
  const restricted = "labels['pod-security.kubernetes.io/enforce'] == 'restricted'";
  assert.match(created ?? '', new RegExp(`object\\.metadata\\.${esc(restricted)}`));
  const binding = find(files.policy, 'ValidatingAdmissionPolicyBinding')[0]?.spec;
  assert.deepEqual(binding, { policyName: 'draincheck-own-namespaces', validationActions: ['Deny'] });
  // What the run's namespace carries is what the policy asks for.
  const ns = namespaceObject({
    runId: 'r1',
    namespace: 'draincheck-r1',
    name: 'work',
    clientName: 'work-client',
  });
  assert.equal(ns.metadata?.labels?.['app.kubernetes.io/managed-by'], 'draincheck');
  assert.equal(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
});

test('deploy/rbac-from.yaml: only reads of apps objects, and its admission policy binds the same group and refuses node access', () => {
  const rules = find(files.from, 'Role')[0]?.rules ?? [];
  for (const r of rules.filter((x) => x.apiGroups.includes('apps')))
    assert.deepEqual(
      r.verbs.filter((v) => !['get', 'list', 'watch'].includes(v)),
      [],
      `apps/${r.resources.join(',')}: the user's objects are only read`,
    );
  const group = find(files.from, 'RoleBinding')[0]?.subjects?.[0];
  const policy = find(files.policy, 'ValidatingAdmissionPolicy')[1]?.spec as {
    matchConditions: Array<{ expression: string }>;
    validations: Array<{ expression: string }>;
  };
  assert.deepEqual(
    policy.matchConditions.map((c) => c.expression),
    [`'${group?.name}' in request.userInfo.groups`],
  );
  const all = policy.validations.map((v) => v.expression.replace(/\s+/g, ' ')).join(' ');
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC', 'hostPath', 'privileged', 'ownerReferences'])
    assert.ok(all.includes(field), field);
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const [mode, { rules, namespace: runNamespace }] of Object.entries(modes)) {
  test(`${mode}: every request of a whole run, its heartbeat and cleanup is granted, and every grant is used`, async (t) => {
    const run = recordedRun('drain');
    const own = runNamespace === undefined;
    const { platform, server, signal } = await fakeKube(
      t,
      (s) => {
        serveSetup(s);
        serveRun(s, run);
        s.on('PATCH', /^\/api\/v1\/namespaces\/[^/]+(\/services\/[^/]+)?$/, (_r, res) =>
          sendJson(res, 200, { metadata: {} }),
        );
        serveNamespaceList(s, [{ metadata: { name: 'draincheck-r1' } }], '900');
        s.on(
          'GET',
          /^\/apis\/apps\/v1\/namespaces\/[^/]+\/deployments$/,
          (_r, res) =>
            sendJson(res, 200, {
              kind: 'DeploymentList',
              apiVersion: 'apps/v1',
              metadata: { resourceVersion: '900' },
              items: [],
            }),
          isList,
        );
        s.on(
          'GET',
          /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/[^/]+\/ingresses$/,
          (_r, res) =>
            sendJson(res, 200, {
              kind: 'IngressList',
              apiVersion: 'networking.k8s.io/v1',
              metadata: { resourceVersion: '900' },
              items: [],
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
      { namespace: runNamespace, keep: false, heartbeat: { intervalMs: 10 } },
    );
    const workloadPlan = planRun(
      resolveScenario({}),
      own ? { runId: 'r1' } : { runId: 'r1', namespace: runNamespace },
    );
    const { workload } = workloadPlan;
    const { namespace } = workload;
    await prepare(platform, workload, signal);
    await server.waitForRequest((r) => r.method === 'PATCH', 'a heartbeat');
    await readUntil(watchPod(platform, namespace, 'work', signal), (e) => e.type === 'DELETED', 'pods');
    await readUntil(
      watchSlices(platform, namespace, 'work', signal),
      (_e, all) => all.length === 2,
      'slices',
    );
    await readUntil(platform.events(signal), (_e, all) => all.length === 2, 'events');
    // The recorded Pod's container is `work`, not the workload's `server`: follow it by a name
    // that is not the workload's, so the container name is read from the Pod.
    await readAll(platform.logs(namespace, 'recorded-work', signal), 'log');
    await platform.delete(
      { kind: 'Pod', namespace, name: workload.pod.metadata!.name! },
      { gracePeriodSeconds: 5 },
    );
    await readAll(platform.runClient(clientJob(workloadPlan), signal), 'client');
    await platform.dispose();
    await cleanupLeftovers(platform.resources, own ? {} : { namespace });
    // A run and a rollout: together they use every grant.
    const requests = [...server.requests, ...(await rolloutRequests(t, runNamespace))];

    const seen = new Set(requests.map((r) => JSON.stringify(rbacAttributes(r))));
    assert.ok(seen.size >= 10, `a representative set of requests (${seen.size})`);
    assert.deepEqual(denied(requests, rules), [], 'every request is granted');
    const used = new Set(denied(requests, []).map((d) => d.split(' (')[0]));
    assert.deepEqual(
      granted(rules).filter((g) => !used.has(g)),
      [],
      'no grant that no request uses',
    );
    if (!own) {
      assert.ok(
        requests.every(
          (r) =>
            r.path === '/version' ||
            r.path.startsWith(`/api/v1/namespaces/${runNamespace}/`) ||
            r.path.startsWith(`/apis/discovery.k8s.io/v1/namespaces/${runNamespace}/`) ||
            r.path.startsWith(`/apis/apps/v1/namespaces/${runNamespace}/`) ||
            r.path.startsWith(`/apis/networking.k8s.io/v1/namespaces/${runNamespace}/`),
        ),
        'every request stays inside the namespace',
      );
    }
    assert.equal(
      denied(requests, []).length,
      requests.filter((r) => r.path !== '/version').length,
      'the check can fail',
    );
    for (const needed of [
      'watch core/pods',
      'get core/pods/log',
      'watch discovery.k8s.io/endpointslices',
      'watch core/events',
      'delete core/pods',
      'create core/services',
      'create apps/deployments',
      'watch apps/deployments',
      'patch apps/deployments',
      ...(own ? [] : ['delete apps/deployments']),
      'create networking.k8s.io/ingresses',
      ...(own ? [] : ['delete networking.k8s.io/ingresses', 'list networking.k8s.io/ingresses']),
    ]) {
      assert.ok(
        denied(requests, []).some((d) => d.startsWith(needed)),
        `${needed} was exercised`,
      );
    }
    if (!own) {
      assert.ok(
        !requests.some(
          (r) =>
            /^\/api\/v1\/namespaces\/?$/.test(r.path) ||
            (r.method !== 'GET' && /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)),
        ),
        'no namespace is listed, created or deleted',
      );
    }
  });
}
