// Embedded runtime benchmark (issue 3): the Service proxy against a direct connection to the
// same lab server Pod, in the same run — throughput (10 connections) and median latency
// (1 connection, so queueing does not hide the proxy's own cost).
import { LocalCluster } from '../src/platform/local/cluster.js';
import { fastTiming } from '../src/platform/local/timing.js';
import { buildWorkload } from '../src/workload/manifests.js';
import { resolveScenario } from '../src/workload/scenario.js';
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

export async function benchProxy(seconds = Number(process.env.BENCH_SECONDS ?? 5)): Promise<BenchResult> {
  const cluster = new LocalCluster({ timing: fastTiming });
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
    for (let round = 0; round < 2; round++) {
      directRps.push(await throughput(direct, 10, seconds));
      proxyRps.push(await throughput(viaService, 10, seconds));
      directP50.push((await latency(direct, 3000)).p50);
      proxyP50.push((await latency(viaService, 3000)).p50);
    }
    const mean = (a: number[]) => a.reduce((x, y) => x + y) / a.length;
    const ratio = mean(proxyRps) / mean(directRps);
    const added = mean(proxyP50) - mean(directP50);
    return {
      bench: 'proxy-vs-direct',
      command: 'npm run bench -- proxy-vs-direct',
      metrics: [
        { name: 'direct /healthz', value: mean(directRps), unit: 'req/s' },
        { name: 'via the Service proxy', value: mean(proxyRps), unit: 'req/s' },
        { name: 'throughput ratio', value: ratio, unit: '', target: '>= 0.70', pass: ratio >= 0.7 },
        { name: 'median latency direct (1 conn)', value: mean(directP50), unit: 'ms' },
        { name: 'median latency via proxy (1 conn)', value: mean(proxyP50), unit: 'ms' },
        { name: 'added median latency', value: added, unit: 'ms', target: '<= 0.3', pass: added <= 0.3 },
      ],
      details: { directRps, proxyRps, directP50, proxyP50, seconds, rounds: 2, pid1: cluster.pid1.pid1 },
    };
  } finally {
    await cluster.dispose();
  }
}
