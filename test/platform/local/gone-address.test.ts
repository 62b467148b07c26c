// A gone Pod's loopback address behaves as a torn-down Pod sandbox on a node
// (src/platform/local/gone-addresses.ts): while the Service rules still name it, a new
// connection sent there gets no answer — not ECONNREFUSED from 127.0.0.N — and the address is
// not given to another Pod; it lingers, still dropped, after the rules forget it, then is given
// back; nothing is left after dispose. Real lab server, real sockets, both data planes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { addressLease } from '../../../src/platform/local/addresses.js';
import { takeLease } from '../../../src/platform/local/lease.js';
import { detectNftables } from '../../../src/platform/local/nftables.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { labPod, openHarness, podReady, workService, type Harness } from '../../helpers/cluster-harness.js';

const nft = detectNftables();
const modes = [
  { mode: 'nftables' as const, skip: nft.available ? undefined : nft.reason },
  { mode: 'userspace' as const, skip: undefined },
];
const named = (name: string, mode: string, skip?: string) =>
  `${mode}: ${name}${skip ? ` (skipped: ${skip})` : ''}`;

/**
 * One new connection through the Service, with an HTTP request once connected: what came back
 * within `ms` — 'no SYN-ACK', 'connected, no response', an error code, or 'answered'.
 */
function probe(host: string, port: number, ms = 1_500): Promise<string> {
  return new Promise((resolve) => {
    let connected = false;
    const socket = net.connect({ host, port });
    const done = (what: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done(connected ? 'connected, no response' : 'no SYN-ACK'), ms);
    socket.once('connect', () => {
      connected = true;
      socket.write('GET /healthz HTTP/1.1\r\nHost: work\r\nConnection: close\r\n\r\n');
    });
    socket.once('data', () => done('answered'));
    socket.once('end', () => done('ended'));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

/** Whether another runtime could lease `ip` now (the lease taken and given back at once). */
async function leaseFree(ip: string): Promise<boolean> {
  const lease = await takeLease(addressLease(ip));
  lease?.close();
  return lease !== undefined;
}

/** The elements of the runtime's `gone` set, as nft lists them ('' without a table). */
function goneSet(): string {
  const tables = spawnSync('nft', ['list', 'tables', 'ip'], { encoding: 'utf8' }).stdout;
  const ours = tables
    .split('\n')
    .map((l) => /^table ip (draincheck_\w+)$/.exec(l.trim())?.[1])
    .filter((t): t is string => t !== undefined && t.startsWith(`draincheck_${process.pid}_`));
  return ours
    .map((t) => spawnSync('nft', ['list', 'set', 'ip', t, 'gone'], { encoding: 'utf8' }).stdout)
    .join('\n');
}

/**
 * A lab Pod (on a loopback address of its own, no network namespace) behind the Service `work`
 * whose rules follow the slice 3 s late; the Pod force-deleted, so it is gone at once while the
 * rules still name it.
 */
async function gonePodBehindService(h: Harness) {
  await h.service(workService());
  h.pod(labPod({ name: 'a' }));
  const pod = await podReady(h, 'a');
  await h.cluster.proxySettled(h.namespace, 'work');
  const ip = pod.status!.podIP!;
  assert.match(ip, /^127\./, 'a loopback address of its own, as the lab server has');
  const { host, port } = h.serviceAddress();
  assert.equal(await probe(host, port), 'answered', 'served before the deletion');
  const from = h.platform.items.length;
  h.cluster.deletePod(h.namespace, 'a', { gracePeriodSeconds: 0 });
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  // The object goes at once, the process a moment later: until then it could still answer.
  await h.platform.waitFor((e) => e.type === 'container-exited', 'the container exited', 10_000, from);
  return { ip, host, port };
}

for (const { mode, skip } of modes) {
  test(
    named(
      "a gone lab Pod's address: a new connection the rules still send there gets no answer (not refused), the address stays leased, lingers after the rules forget it, then is given back; nothing left after dispose",
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      const h = openHarness({
        timing: { ...fastTiming, proxySyncDelayMs: 3_000 },
        serviceProxy: mode,
        goneLingerMs: 1_500,
      });
      t.after(() => h.close());
      const { ip, host, port } = await gonePodBehindService(h);
      // The drop is written as the Pod goes; wait for it, not for time.
      await h.cluster.goneSettled();
      const started = performance.now();
      const seen = await probe(host, port);
      // Kernel NAT: the SYN goes unanswered, as to a torn-down sandbox. Userspace: the client's
      // handshake completes at the proxy (as always there), which never reaches the address.
      assert.equal(
        seen,
        mode === 'nftables' ? 'no SYN-ACK' : 'connected, no response',
        `after ${Math.round(performance.now() - started)} ms`,
      );
      if (mode === 'nftables') assert.match(goneSet(), new RegExp(`${ip.replace(/\./g, '\\.')} \\. `));
      assert.equal(
        await leaseFree(ip),
        false,
        'not given to another Pod while connections to it go unanswered',
      );
      // The rules forget the Pod (refused now: no endpoint left); the address lingers, then is given back.
      await h.cluster.proxySettled(h.namespace, 'work');
      const refused = await probe(host, port);
      assert.equal(refused, 'ECONNREFUSED', 'no endpoint: the Service refuses');
      assert.equal(await leaseFree(ip), false, 'still lingering');
      // A timer gives it back; polled, bounded (100 tries, 10 s).
      let free = false;
      for (let i = 0; i < 100 && !free; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await h.cluster.goneSettled();
        free = await leaseFree(ip);
      }
      assert.equal(free, true, 'given back after the linger');
      if (mode === 'nftables') assert.doesNotMatch(goneSet(), new RegExp(`${ip.replace(/\./g, '\\.')} \\. `));
      await h.close();
      assert.equal(goneSet().trim(), '', 'no table of this runtime left');
    },
  );

  test(
    named(
      "a deleted lab Pod whose container exited: its address goes unanswered as the kubelet's kill returns (the sandbox stops), before its terminated status is written and the object goes",
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      // The status comes 4 s after the exit, the rules follow the slice 3 s late.
      const h = openHarness({
        timing: { ...fastTiming, proxySyncDelayMs: 3_000, containerStatusDelayMs: 4_000 },
        serviceProxy: mode,
      });
      t.after(() => h.close());
      await h.service(workService());
      h.pod(labPod({ name: 'a', onSigterm: 'exit' }));
      const pod = await podReady(h, 'a');
      await h.cluster.proxySettled(h.namespace, 'work');
      assert.match(pod.status!.podIP!, /^127\./);
      const { host, port } = h.serviceAddress();
      const from = h.platform.items.length;
      h.cluster.deletePod(h.namespace, 'a');
      await h.platform.waitFor((e) => e.type === 'container-exited', 'the container exited', 10_000, from);
      await h.cluster.goneSettled();
      assert.equal(
        await probe(host, port, 1_000),
        mode === 'nftables' ? 'no SYN-ACK' : 'connected, no response',
      );
      const status = h.pods.values.at(-1)?.object.status?.containerStatuses?.[0]?.state;
      assert.equal(status?.terminated, undefined, 'the terminated status is not written yet');
      assert.ok(!h.pods.values.some((e) => e.type === 'DELETED'), 'the Pod object is still there');
    },
  );

  test(
    named(
      "with the rule off, the same connection to a gone lab Pod's address is refused at once (the difference the rule makes)",
      mode,
      skip,
    ),
    { skip },
    async (t) => {
      const h = openHarness({
        timing: { ...fastTiming, proxySyncDelayMs: 3_000 },
        serviceProxy: mode,
        rulesOff: ['gone-pod-unreachable'],
      });
      t.after(() => h.close());
      const { host, port } = await gonePodBehindService(h);
      await h.cluster.goneSettled();
      // Userspace: the proxy's connect is refused and it resets the client's connection.
      assert.equal(await probe(host, port), mode === 'nftables' ? 'ECONNREFUSED' : 'ECONNRESET');
    },
  );
}
