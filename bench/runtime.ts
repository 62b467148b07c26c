// Embedded runtime benchmark (issue 3): the Service proxy against a direct connection to the
// same lab server Pod, in the same run — throughput (10 connections) and median latency
// (1 connection, so queueing does not hide the proxy's own cost). Each data plane available
// here is measured: nftables (kernel NAT, the default where it works) and userspace.
import { LocalCluster, resolveServiceProxy } from '../src/platform/local/cluster.js';
import { fastTiming } from '../src/platform/local/timing.js';
import { buildWorkload } from '../src/workload/manifests.js';
import { resolveScenario } from '../src/workload/scenario.js';
import os from 'node:os';
import { pidWithEnv, processCpuMs } from './lib/cpu.js';
import { latency, throughput } from './lib/load.js';
import type { BenchResult } from './lib/report.js';
import type { V1Pod } from '@kubernetes/client-node';

async function readyPod(cluster: LocalCluster, ns: string): Promise<V1Pod> {
  const ac = new AbortController();
  try {
    for await (const e of cluster.watch<V1Pod>('pods', ns, {}, ac.signal)) {
      if (e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        return e.object;
    }
  } finally {
    ac.abort();
  }
  throw new Error('the Pod never became ready');
}

type Metric = BenchResult['metrics'][number];

export async function benchProxy(seconds = Number(process.env.BENCH_SECONDS ?? 5)): Promise<BenchResult> {
  const modes: Array<'nftables' | 'userspace'> = [];
  let nftReason = '';
  try {
    resolveServiceProxy('nftables');
    modes.push('nftables');
  } catch (error) {
    nftReason = (error as Error).message;
  }
  modes.push('userspace');
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = { nftables: nftReason || 'measured' };
  for (const mode of modes) {
    const one = await benchProxyMode(mode, seconds);
    // The first mode is the one `auto` picks here (what users get by default).
    const label = mode === modes[0] ? `${mode} (default)` : mode;
    metrics.push(...one.metrics.map((m) => ({ ...m, name: `${label}: ${m.name}` })));
    details[mode] = one.details;
  }
  metrics.push({ name: 'cores seen', value: os.availableParallelism(), unit: '' });
  return { bench: 'proxy-vs-direct', command: 'npm run bench -- proxy-vs-direct', metrics, details };
}

export async function benchProxyMode(
  mode: 'nftables' | 'userspace',
  seconds: number,
): Promise<{ metrics: Metric[]; details: Record<string, unknown> }> {
  const cluster = new LocalCluster({ timing: fastTiming, serviceProxy: mode });
  try {
    const scenario = resolveScenario({ onSigterm: 'drain' });
    const w = buildWorkload(scenario, { runId: 'bench', namespace: 'bench', name: 'work' });
    cluster.createNamespace({ metadata: { name: 'bench' } });
    await cluster.createService(w.service);
    cluster.createPod(w.pod);
    const pod = await readyPod(cluster, 'bench');
    await cluster.proxySettled('bench', 'work');
    const svc = cluster.serviceAddress('bench', 'work')!;
    const direct = `http://${pod.status!.podIP}:${8080}/healthz`;
    const viaService = `http://${svc.host}:${svc.port}/healthz`;
    // Until the Service answers (the slice and the proxy follow the Pod's readiness).
    await throughput(viaService, 1, 1);
    await throughput(direct, 10, 1);
    await throughput(viaService, 10, 1);
    const directRps: number[] = [];
    const proxyRps: number[] = [];
    const directP50: number[] = [];
    const proxyP50: number[] = [];
    // CPU per request of the lab server and of the proxy (this process), so the proxy's cost
    // reads the same on 2 cores or 32: on a 2-core machine the proxy's extra process competes
    // with the server and the load generator for the same cores, which the ratio alone hides.
    const serverPid = pidWithEnv('POD_NAMESPACE=bench');
    const serverUsPerReq: number[] = [];
    const proxyUsPerReq: number[] = [];
    for (let round = 0; round < 2; round++) {
      const s0 = serverPid ? processCpuMs(serverPid) : 0;
      directRps.push(await throughput(direct, 10, seconds));
      if (serverPid)
        serverUsPerReq.push(((processCpuMs(serverPid) - s0) * 1000) / (directRps.at(-1)! * seconds));
      const p0 = process.cpuUsage();
      proxyRps.push(await throughput(viaService, 10, seconds));
      const p1 = process.cpuUsage(p0);
      proxyUsPerReq.push((p1.user + p1.system) / (proxyRps.at(-1)! * seconds));
      directP50.push((await latency(direct, 3000)).p50);
      proxyP50.push((await latency(viaService, 3000)).p50);
    }
    const mean = (a: number[]) => a.reduce((x, y) => x + y) / a.length;
    const ratio = mean(proxyRps) / mean(directRps);
    const added = mean(proxyP50) - mean(directP50);
    return {
      metrics: [
        { name: 'direct /healthz', value: mean(directRps), unit: 'req/s' },
        { name: 'via the Service proxy', value: mean(proxyRps), unit: 'req/s' },
        { name: 'throughput ratio', value: ratio, unit: '', target: '>= 0.70', pass: ratio >= 0.7 },
        { name: 'median latency direct (1 conn)', value: mean(directP50), unit: 'ms' },
        { name: 'median latency via proxy (1 conn)', value: mean(proxyP50), unit: 'ms' },
        { name: 'added median latency', value: added, unit: 'ms', target: '<= 0.3', pass: added <= 0.3 },
        {
          name: 'lab server CPU per request',
          value: serverUsPerReq.length ? mean(serverUsPerReq) : Number.NaN,
          unit: 'µs',
        },
        { name: 'proxy CPU per request (this process)', value: mean(proxyUsPerReq), unit: 'µs' },
      ],
      details: {
        directRps,
        proxyRps,
        directP50,
        proxyP50,
        serverUsPerReq,
        proxyUsPerReq,
        seconds,
        rounds: 2,
        pid1: cluster.pid1.pid1,
      },
    };
  } finally {
    await cluster.dispose();
  }
}
