// The rollout's terminal report: one table row per rollout (a policy of --compare, or the
// one), then one sentence each naming its failures' cause, and the Pods' lifecycles.
// Document strings are untrusted: everything printed goes through terminalSafe.
import type { Style } from '../../report/style.js';
import { renderTextTable } from '../../report/text.js';
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
  }
  lines.push('', renderTextTable(header, rows, style), '');
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
