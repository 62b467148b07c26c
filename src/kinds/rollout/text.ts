// The rollout's terminal report: one table row per rollout (a policy of --compare, or the
// one), then one sentence each naming its failures' cause, and the Pods' lifecycles.
// Document strings are untrusted: everything printed goes through terminalSafe.
import type { Style } from '../../report/style.js';
import { terminalSafe } from '../../util/terminal-text.js';
import type { RolloutDocument } from './document.js';

const fmt = (ms: number | null): string =>
  ms === null ? '-' : ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;

function failuresCell(doc: RolloutDocument): string {
  const parts = Object.entries(doc.totals.failures)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([cls, n]) => `${cls} ${n}`);
  return parts.length ? parts.join(', ') : '-';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function renderRolloutText(docs: RolloutDocument[], style: Style): string {
  const header = ['rollout', 'requests', 'failed', 'failures by class', 'p50', 'p99', 'max', 'rollout took'];
  const rows = docs.map((d) => [
    terminalSafe(d.scenario.name),
    String(d.totals.requests),
    String(d.totals.failed),
    failuresCell(d),
    fmt(d.totals.latency.p50Ms),
    fmt(d.totals.latency.p99Ms),
    fmt(d.totals.latency.maxMs),
    fmt(d.rollout.durationMs) + (d.complete ? '' : ' (incomplete)'),
  ]);
  const lines = [style.bold('draincheck rollout'), ''];
  for (const d of docs) {
    lines.push(
      `${terminalSafe(d.scenario.name)}: Deployment ${terminalSafe(d.deployment.name)}, ${d.deployment.replicas} replicas, maxSurge ${terminalSafe(String(d.deployment.maxSurge))}, maxUnavailable ${terminalSafe(String(d.deployment.maxUnavailable))}; --on-sigterm ${terminalSafe(d.scenario.onSigterm ?? 'custom')}, grace ${d.scenario.terminationGracePeriodSeconds}s, preStop sleep ${d.scenario.preStopSleepSeconds}s; load ${d.load.rate}/s on ${d.load.connections === 'new' ? 'a new connection each' : `${d.load.connections} connections`}, work ${terminalSafe(d.load.workMs)} ms`,
    );
    const client = clientFact(d);
    if (client) lines.push(`  ${client}`);
  }
  lines.push('', table([header, ...rows]), '');
  for (const d of docs) {
    lines.push(`${terminalSafe(d.scenario.name)}: ${terminalSafe(d.verdict.explanation)}`);
    if (!d.complete) lines.push(`  incomplete: ${terminalSafe(d.incompleteReason ?? '')}`);
    const j = d.records.join;
    if (j && (j.fateUnknown > 0 || j.unclaimed > 0 || j.journalLinesLost > 0))
      lines.push(
        `  journal join: server fate unknown for ${j.fateUnknown} requests (window passed), ${j.unclaimed} journal ids no request claimed, ${j.journalLinesLost} journal lines lost — their failure classes are the client's presumption`,
      );
  }
  for (const d of docs) {
    lines.push(
      '',
      `${terminalSafe(d.scenario.name)} Pods (ms since start: ready / terminating / endpoint terminating / endpoint removed / gone, exit code):`,
    );
    for (const p of d.pods)
      lines.push(
        `  ${terminalSafe(p.name)} (${p.revision}): ${[p.readyAtMs, p.terminatingAtMs, p.endpointTerminatingAtMs, p.endpointRemovedAtMs, p.goneAtMs].map((x) => (x === null ? '-' : String(Math.round(x)))).join(' / ')}${p.exitCode === null ? '' : `, exit ${p.exitCode}`}`,
      );
  }
  return lines.join('\n');
}

/**
 * The load client's line: which real client its pool imitates, and whether it kept its
 * schedule (its own event-loop delay and schedule lag, issue 22.6). Null for documents from
 * before the client was recorded.
 */
export function clientFact(d: RolloutDocument): string | null {
  const c = d.load.client;
  if (!c) return null;
  const pool =
    d.load.connections === 'new'
      ? 'a new connection per request'
      : `pool ${c.pool} (${c.pool === 'lifo' ? 'most recently used first, as node:http’s Agent and Go’s Transport' : 'least recently used first: every connection kept warm'}), idle timeout ${c.idleTimeoutMs === 0 ? 'none' : `${c.idleTimeoutMs} ms`}, ${c.retryReused ? `retries a request that failed on a reused connection before any byte, as Go’s Transport${c.retried === null ? '' : ` (${c.retried} retried)`}` : 'no retries'}`;
  const where = c.ranIn === 'load-pod' ? 'in a load Pod' : 'in a worker thread';
  const ms = (x: number | null) => (x === null ? '-' : String(x));
  const lag =
    c.eventLoopDelayMs && c.scheduleLagMs
      ? `; its event-loop delay p50 ${ms(c.eventLoopDelayMs.p50Ms)} / p99 ${ms(c.eventLoopDelayMs.p99Ms)} / max ${ms(c.eventLoopDelayMs.maxMs)} ms, schedule lag p99 ${ms(c.scheduleLagMs.p99Ms)} / max ${ms(c.scheduleLagMs.maxMs)} ms`
      : '';
  return `client: ${pool}; ran ${where}${lag}`;
}
