// kube-proxy's part in the embedded runtime, with a real lab server behind the Service and
// real TCP clients: with one Pod terminating, NEW connections still reach it while it is
// serving (KEP-1669 fallback) and are refused once it is not; ESTABLISHED connections are not
// cut by endpoint changes (conntrack); the Service accepts again when an endpoint returns.
// Every test runs on both data planes: kernel NAT (nftables, where this machine allows it)
// and the userspace TCP proxy.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { conntrackReadable, detectNftables } from '../../../src/platform/local/nftables.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import {
  conditionsOf,
  labPod,
  openHarness,
  podReady,
  workService,
  type Harness,
  type LabPodOptions,
  type Mark,
} from '../../helpers/cluster-harness.js';
import { expectError, get } from '../../helpers/http.js';

interface Exchange {
  status: number;
  body: Record<string, unknown>;
  localPort: number;
}

/** One GET on the given agent (a keep-alive agent reuses its socket), with the local port used. */
function request(host: string, port: number, path: string, agent: http.Agent): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text) as Record<string, unknown>,
          localPort: req.socket!.localPort!,
        }),
      );
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const nft = detectNftables();
// Where the kernel hides its connection table, kernel NAT cannot say where a connection went.
const routesKnown = (mode: string) => mode === 'userspace' || conntrackReadable();
const modes = [
  { mode: 'nftables' as const, skip: nft.available ? undefined : nft.reason },
  { mode: 'userspace' as const, skip: undefined },
];
const named = (name: string, mode: string, skip?: string) =>
  `${mode}: ${name}${skip ? ` (skipped: ${skip})` : ''}`;

/** A harness on `mode` with one Ready lab Pod behind the Service `work`, routes applied. */
async function podBehindService(
  t: { after: (fn: () => Promise<void>) => void },
  mode: 'nftables' | 'userspace',
  pod: LabPodOptions,
) {
  const h = openHarness({ timing: fastTiming, serviceProxy: mode });
  t.after(() => h.close());
  await h.service(workService());
  h.pod(labPod(pod));
  const ready = await podReady(h);
  await h.cluster.proxySettled(h.namespace, 'work');
  return { h, pod: ready, ...h.serviceAddress() };
}

/** Once the endpoint stops serving, the Service refuses new connections (the route is gone). */
async function routeGone(h: Harness, mark: Mark) {
  await h.slices.waitFor(
    (e) => conditionsOf(e.object)?.serving === false,
    'serving:false',
    15_000,
    mark.slices,
  );
  await h.cluster.proxySettled(h.namespace, 'work');
  await listening(h, false, mark.platform);
}

const listening = (h: Harness, accepting: boolean, from: number) =>
  h.platform.waitFor(
    (e) => e.type === 'service-listening' && e.data.accepting === accepting,
    `the Service ${accepting ? 'accepting' : 'refusing'}`,
    15_000,
    from,
  );

for (const { mode, skip } of modes) {
  test(
    named(
      'one Pod terminating: new connections reach it while it is serving (fallback), are refused once it is not, and are accepted again when an endpoint returns',
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      const h = openHarness({ timing: fastTiming, serviceProxy: mode });
      assert.equal(h.cluster.serviceProxy.mode, mode);
      t.after(() => h.close());
      await h.service(workService());
      // A long drain: /healthz answers 503 but the process keeps serving; three failed probes
      // (2 s at least) are needed before the endpoint stops serving.
      h.pod(
        labPod({
          onSigterm: 'drain',
          env: { DRAIN_DELAY_MS: '600000', DRAIN_TIMEOUT_MS: '600000' },
          probe: { periodSeconds: 1, failureThreshold: 3 },
        }),
      );
      const pod = await podReady(h);
      const { host, port } = h.serviceAddress();
      const journal = h.journal();
      const mark = h.deletePod();

      // The slice says terminating as soon as the deletion is seen, which can be before the
      // kubelet's SIGTERM reaches the server: wait for the drain, so /healthz answers 503.
      await journal.waitFor((l) => l.event === 'drain-started', 'the drain');
      await h.slices.waitFor(
        (e) => conditionsOf(e.object)?.terminating === true && conditionsOf(e.object)?.serving === true,
        'ready:false serving:true terminating:true',
        15_000,
        mark.slices,
      );
      await h.cluster.proxySettled(h.namespace, 'work');
      const routedFrom = h.platform.items.length;
      const agent = new http.Agent({ keepAlive: false });
      t.after(() => agent.destroy());
      const fallback = await request(host, port, '/healthz', agent);
      assert.equal(fallback.status, 503, 'answered by the draining Pod itself');
      assert.equal(fallback.body.uid, pod.metadata?.uid);
      // The userspace proxy records the route as it connects; with kernel NAT it is read back
      // from conntrack by the client's port (what the experiment does after work-connected).
      if (routesKnown(mode)) {
        await h.cluster.recordRoute(h.namespace, 'work', fallback.localPort);
        const routed = await h.platform.waitFor(
          (e) => e.type === 'connection-routed' && e.data.clientPort === fallback.localPort,
          'routing',
          5000,
          routedFrom,
        );
        assert.equal(routed.value.data.endpoint, `${pod.status!.podIP}:8080`);
        assert.equal(routed.value.data.fallback, true);
        assert.equal(routed.value.data.podUid, pod.metadata?.uid);
      } else {
        t.diagnostic('/proc/net/nf_conntrack is not readable here: the route is not checked');
      }

      await routeGone(h, mark);
      const refused = await expectError(get(host, port, '/healthz'));
      assert.equal(refused.code, 'ECONNREFUSED', refused.message);
      // Refused by the Service path, not by a dead Pod: the process still answers on its own IP.
      const direct = await get(pod.status!.podIP!, 8080, '/healthz');
      assert.equal(direct.status, 503);
      assert.ok(!h.platform.values.some((e) => e.type === 'container-exited'));

      const back = h.platform.items.length;
      h.pod(labPod({ name: 'work-2' }));
      const second = await podReady(h, 'work-2');
      await listening(h, true, back);
      await h.cluster.proxySettled(h.namespace, 'work');
      const again = await get(host, port, '/healthz');
      assert.equal(again.status, 200);
      assert.equal(again.json().uid, second.metadata?.uid, 'the ready endpoint, not the terminating one');
    },
  );

  test(
    named(
      'an ESTABLISHED connection is not cut when its endpoint stops being usable, while new ones are refused',
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      const { h, pod, host, port } = await podBehindService(t, mode, {
        onSigterm: 'drain',
        env: { DRAIN_DELAY_MS: '600000', DRAIN_TIMEOUT_MS: '600000' },
      });
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      t.after(() => agent.destroy());

      const before = await request(host, port, '/state', agent);
      assert.equal(before.body.uid, pod.metadata?.uid);
      const mark = h.deletePod();
      await routeGone(h, mark);

      const refused = await expectError(get(host, port, '/state'));
      assert.equal(refused.code, 'ECONNREFUSED', 'a new connection');
      const after = await request(host, port, '/state', agent);
      assert.equal(after.localPort, before.localPort, 'the same TCP connection as before the deletion');
      assert.equal(after.status, 200);
      assert.equal(after.body.uid, pod.metadata?.uid);
      assert.equal(after.body.draining, true, 'served by the terminating Pod');
    },
  );

  test(
    named(
      'a Pod killed after its route is gone: its established connection ends with a reset, it does not hang',
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      // A regression guard for kernel NAT: conntrack must stay on when the last dnat rule goes,
      // or the dying Pod's FIN/RST never reaches the client (it would wait for its own timeout).
      const { h, host, port } = await podBehindService(t, mode, {
        onSigterm: 'drain',
        graceSeconds: 2,
        env: { DRAIN_TIMEOUT_MS: '600000' },
      });
      const journal = h.journal();
      const work = expectError(get(host, port, '/work?ms=60000&id=held', { timeoutMs: 20_000 }));
      await journal.waitFor((l) => l.event === 'request-accepted' && l.id === 'held', 'acceptance');
      const mark = h.deletePod();
      await routeGone(h, mark);
      // Only a SIGKILL after the route was gone counts (waitFor looks from that point on).
      const gone = h.platform.items.length;
      await h.platform.waitFor(
        (e) => e.type === 'signal-sent' && e.data.signal === 'SIGKILL',
        'SIGKILL after the route was gone',
        15_000,
        gone,
      );
      const error = await work;
      assert.equal(error.code, 'ECONNRESET', error.message);
    },
  );
}
