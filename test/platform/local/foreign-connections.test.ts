// Unrelated load through a Service is not the experiment: only connections the runner's
// client names (by its local port, as the experiment does for every client event) become
// `connection-routed` events, on both data planes; the userspace proxy, which sees every
// connection, reports the others as `foreign-connections` counts per endpoint and interval —
// a few events however many connections, so a run document does not grow with foreign load.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { conntrackReadable, detectNftables } from '../../../src/platform/local/nftables.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import type { PlatformEvent } from '../../../src/platform/types.js';
import { labPod, openHarness, podReady, workService } from '../../helpers/cluster-harness.js';
import { get } from '../../helpers/http.js';

const nft = detectNftables();
const modes = [
  { mode: 'nftables' as const, skip: nft.available ? undefined : nft.reason },
  { mode: 'userspace' as const, skip: undefined },
];
const FOREIGN = 60;

/** One GET on a fresh connection; resolves with the client's local port once it is answered. */
function ownRequest(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let localPort = 0;
    const req = http.request({ host, port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(localPort));
    });
    req.on('socket', (s) => s.once('connect', () => (localPort = s.localPort ?? 0)));
    req.setTimeout(10_000, () => req.destroy(new Error('/healthz timed out')));
    req.on('error', reject);
    req.end();
  });
}

for (const { mode, skip } of modes) {
  test(
    `${mode}: foreign connections are counted, not recorded one by one; the experiment's stay individual`,
    { skip },
    async (t) => {
      const h = openHarness({ timing: fastTiming, serviceProxy: mode });
      t.after(() => h.close());
      await h.service(workService());
      h.pod(labPod());
      const pod = await podReady(h);
      await h.cluster.proxySettled(h.namespace, 'work');
      const { host, port } = h.serviceAddress();
      const from = h.platform.items.length;

      // The experiment's connection, among foreign ones before and after it.
      const before = Array.from({ length: FOREIGN / 2 }, () => get(host, port, '/healthz'));
      const own = await ownRequest(host, port);
      const after = Array.from({ length: FOREIGN / 2 }, () => get(host, port, '/healthz'));
      for (const r of await Promise.all([...before, ...after])) assert.equal(r.status, 200);
      await h.cluster.recordRoute(h.namespace, 'work', own);
      const endpoint = `${pod.status!.podIP}:8080`;

      const events = () => h.platform.items.slice(from).map((s) => s.value);
      const foreignCount = (list: PlatformEvent[]) =>
        list
          .filter((e) => e.type === 'foreign-connections')
          .reduce(
            (n, e) =>
              n + ((e.data.endpoints as Record<string, { connections: number }>)[endpoint]?.connections ?? 0),
            0,
          );
      if (mode === 'userspace') {
        // Every foreign connection is counted once, within a few intervals (bounded wait).
        for (let i = 0; i < 100 && foreignCount(events()) < FOREIGN; i++)
          await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(
          foreignCount(events()),
          FOREIGN,
          JSON.stringify(events().filter((e) => e.type === 'foreign-connections')),
        );
        const aggregates = events().filter((e) => e.type === 'foreign-connections');
        assert.ok(
          aggregates.length <= 10,
          `${aggregates.length} aggregate events for ${FOREIGN} connections`,
        );
        for (const e of aggregates) {
          assert.equal(e.data.service, 'work');
          assert.equal(
            e.data.connections,
            (e.data.endpoints as Record<string, { connections: number }>)[endpoint]?.connections,
          );
        }
      }
      const routed = events().filter((e) => e.type === 'connection-routed');
      if (mode === 'userspace' || conntrackReadable()) {
        assert.deepEqual(
          routed.map((e) => e.data.clientPort),
          [own],
          'only the experiment’s connection is recorded one by one',
        );
        assert.equal(routed[0]!.data.endpoint, endpoint);
        assert.equal(routed[0]!.data.podUid, pod.metadata?.uid);
      } else {
        assert.deepEqual(routed, []);
      }
    },
  );
}
