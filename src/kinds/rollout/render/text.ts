// The rollout's terminal report: one table row per rollout (a policy of --compare, or the
// one), then one sentence each naming its failures' cause, and the Pods' lifecycles.
// Document strings are untrusted: everything printed goes through terminalSafe.
import { ingressWords } from '../ingress-evidence.js';
import { pinningShown, pinningWords } from '../join/pinning.js';
import { retryWords } from '../join/retry-tally.js';
import { cpuWords } from '../../../probe/load/cpu-cgroup.js';
import { sentenceOf, strainsOfRuns, strainWords } from '../compare-strain.js';
import { classCountNote, failedShown } from '../explain.js';
import type { Style } from '../../../report/style.js';
import { renderTextTable } from '../../../report/text.js';
import { terminalSafe } from '../../../util/terminal-text.js';
import type { RolloutDocument } from '../document.js';
import { rolloutFacts } from '../settings.js';
import { factValue, platformFact } from '../../../experiment/platform-facts.js';

const fmt = (ms: number | null): string =>
  ms === null ? '-' : ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.round(ms)}ms`;

function failuresCell(doc: RolloutDocument): string {
  // Not sent has its own column (the load's limit, not the server's failure); a document from
  // before it was kept apart still lists it among the failures' classes.
  const parts = Object.entries(doc.totals.failures)
    .filter(([cls, n]) => (n ?? 0) > 0 && cls !== 'not-sent')
    .map(([cls, n]) => `${cls} ${n}${classCountNote(doc, cls)}`);
  if ((doc.totals.unaccounted ?? 0) > 0) parts.push(`no class ${doc.totals.unaccounted}`);
  return parts.length ? parts.join(', ') : '-';
}

/** How the cluster ran the preStop sleep (the kube platform's `preStopAction` fact), and why. */
function preStopForm(d: RolloutDocument): string {
  const fact = platformFact(d.platform, 'preStopAction');
  if (!fact || d.scenario.preStopSleepSeconds <= 0) return '';
  const why = fact.note ? `: ${fact.note}` : '';
  return terminalSafe(` (${fact.value === 'exec' ? 'exec sleep' : `the ${factValue(fact)} action`}${why})`);
}

/**
 * The documents in the order their run had them: a run's compared policies as --compare gave
 * them (`compare.scenarios`), runs in the order they came — not the files' alphabetical order.
 */
export function inRunOrder(docs: readonly RolloutDocument[]): RolloutDocument[] {
  const runs = [...new Set(docs.map((d) => d.runId))];
  const rank = (d: RolloutDocument) => {
    const i = d.compare?.scenarios.indexOf(d.scenario.name) ?? -1;
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return docs
    .map((d, i) => ({ d, i }))
    .sort((a, b) => runs.indexOf(a.d.runId) - runs.indexOf(b.d.runId) || rank(a.d) - rank(b.d) || a.i - b.i)
    .map(({ d }) => d);
}

/**
 * Where drain+prestop's preStop sleep came from, under --compare: the propagation time measured
 * first (its samples and the rule) or --prestop-sleep-seconds. Null for any other document.
 */
export function propagationNote(d: RolloutDocument): string | null {
  const m = d.propagation;
  if (!m) {
    return d.compare && d.scenario.name === 'drain-prestop'
      ? `drain+prestop: preStop sleep ${d.scenario.preStopSleepSeconds} s (--prestop-sleep-seconds)`
      : null;
  }
  const samples = m.samplesMs.map((x) => (x === null ? 'not seen' : `${x} ms`)).join(', ');
  // A load Pod's answers are put on this machine's clock late by at most the fastest log
  // delivery (src/kinds/rollout/propagation-load.ts): a sample can only be longer than the lag.
  const via =
    m.sampledBy === 'load-pod'
      ? `; sampled by a load Pod in the cluster, a new connection every ${m.sampleIntervalMs} ms, its times put on this machine's clock late by at most the fastest log delivery, so a sample can only be longer than the lag (the sleep errs long)`
      : '';
  // Only a document measured through the load balancer carries the delay; an older document
  // read back (or a load without it) must still render.
  const lb = d.load?.lbDeregistrationMs ?? 0;
  const path =
    m.through === 'load-balancer'
      ? ` through the load balancer, the slowest layer: the ingress's sync and its ${lb} ms late deregistration (--lb-deregistration-ms) included`
      : m.through === 'ingress'
        ? ' through the ingress, its sync included'
        : // --ingress-url: the samples went through the Service only; the user's ingress's own
          // sync (its controller's endpoint updates) is not in them.
          d.ingress?.kind === 'url'
          ? " through the Service only — your ingress's own sync is not measured, so the sleep is a lower bound"
          : '';
  return `drain+prestop: preStop sleep ${m.preStopSeconds} s, from the propagation time measured on this platform${path} (DELETE → no new connection routed to the Pod: ${samples} over ${m.samplesMs.length} deletions; the largest rounded up to whole seconds, plus 1 s${via})${tailNote(d, m.preStopSeconds)}`;
}

/**
 * A profile built from published percentiles (--timing large-cluster) knows its tail, which a
 * few deletions sample only by chance: the sleep that covers its p99, said next to the measured one.
 */
function tailNote(d: RolloutDocument, measuredSeconds: number): string {
  const sync = d.platform.timing?.proxySyncDelayMs;
  const p99 = typeof sync === 'object' ? sync.quantiles?.find((q) => q.p === 0.99) : undefined;
  if (!p99) return '';
  const covers = Math.ceil(p99.ms / 1000) + 1;
  return covers > measuredSeconds
    ? `; the timing profile's published p99 rule sync is ${p99.ms} ms: --prestop-sleep-seconds ${covers} covers 99 % of its syncs, the ${measuredSeconds} s measured did not reach its tail`
    : `; the timing profile's published p99 rule sync is ${p99.ms} ms: the ${measuredSeconds} s measured covers it`;
}

export function renderRolloutText(unordered: RolloutDocument[], style: Style): string {
  const docs = inRunOrder(unordered);
  const header = [
    'rollout',
    'requests',
    'failed',
    'failures by class',
    'not sent',
    'p50',
    'p99',
    'max',
    'rollout took',
  ];
  const rows = docs.map((d) => [
    terminalSafe(d.scenario.name),
    String(d.totals.requests),
    String(failedShown(d)),
    failuresCell(d),
    String((d.totals.notSent ?? 0) + (d.totals.failures['not-sent'] ?? 0)),
    fmt(d.totals.latency.p50Ms),
    fmt(d.totals.latency.p99Ms),
    fmt(d.totals.latency.maxMs),
    fmt(d.rollout.durationMs) + (d.complete ? '' : ' (incomplete)'),
  ]);
  const lines = [style.bold('draincheck rollout'), ''];
  for (const d of docs) {
    // The settings as their rows say them (./settings.ts).
    const facts = rolloutFacts(d);
    const said = (section: 'load' | 'deployment') =>
      facts
        .filter((f) => f.section === section)
        .map((f) => terminalSafe(f.text))
        .join(', ');
    lines.push(
      `${terminalSafe(d.scenario.name)}: Deployment ${terminalSafe(d.deployment.name)}, ${said('deployment')}; --on-sigterm ${terminalSafe(d.scenario.onSigterm ?? 'custom')}, grace ${d.scenario.terminationGracePeriodSeconds}s, preStop sleep ${d.scenario.preStopSleepSeconds}s${preStopForm(d)}; load ${said('load')}`,
    );
    const client = clientFact(d);
    if (client) lines.push(`  ${terminalSafe(client)}`);
    for (const line of loadPodLines(d)) lines.push(`  ${terminalSafe(line)}`);
  }
  lines.push('', renderTextTable(header, rows, style), '');
  // A compare rolled at once that strained what it shared (compare.strain, the same in each of
  // its documents): said once per run, before the sentences it qualifies.
  const strained = strainsOfRuns(docs);
  for (const s of strained) lines.push(`shared strain: ${terminalSafe(strainWords(s))}`);
  if (strained.length) lines.push('');
  for (const d of docs) {
    lines.push(`${terminalSafe(d.scenario.name)}: ${terminalSafe(sentenceOf(d))}`);
    if (!d.complete) lines.push(`  incomplete: ${terminalSafe(d.incompleteReason ?? '')}`);
    // The proxy in front: what it answered and retried, each failed attempt's Pod and cause.
    if (d.ingress) lines.push(...ingressWords(d.ingress).map((l) => `  ${terminalSafe(l)}`));
    // The client's retries (--retry, --post-share): what it sent again, what ran twice.
    if (d.retries) lines.push(`  ${terminalSafe(retryWords(d.retries, d.load.protocol))}`);
    // Which Pods the client's connections stayed on (issue 26.3).
    if (pinningShown(d.pinning, d.load.protocol))
      lines.push(`  ${terminalSafe(pinningWords(d.pinning, d.load.protocol))}`);
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
  const notes = docs.map(propagationNote).filter((n): n is string => n !== null);
  if (notes.length > 0) lines.push('', ...notes.map(terminalSafe));
  return lines.join('\n');
}

/**
 * The load client's line: where it ran, what it retried and closed, and whether it kept its
 * schedule (its own event-loop delay and schedule lag, issue 22.6). Its pool's settings are rows
 * of `load`, said with the other settings; a document written before they were rows keeps them
 * here and they are said here. Null for documents from before the client was recorded.
 */
export function clientFact(d: RolloutDocument): string | null {
  const c = d.load.client;
  if (!c) return null;
  const parts: string[] = [];
  if (c.pool !== undefined && d.load.pool === undefined && d.load.connections !== 'new')
    parts.push(
      `pool ${c.pool}, idle timeout ${c.idleTimeoutMs === 0 ? 'none' : `${c.idleTimeoutMs ?? '-'} ms`}, ${c.retryReused ? 'retries on reused connections' : 'no retries'}`,
    );
  const pods = d.load.pods?.length ?? 0;
  parts.push(
    `ran ${c.ranIn === 'load-pod' ? (pods > 1 ? `in ${pods} load Pods (counts summed, the worst delays${c.cpu === undefined ? '' : ', the most throttled cgroup'})` : 'in a load Pod') : 'in a worker thread'}`,
  );
  if (c.retried !== null && (d.load.retryReused ?? c.retryReused)) parts.push(`${c.retried} retried`);
  // Only a keep-alive pool has idle connections to close (h2c, gRPC and ws transports count 0).
  if (c.idleClosed !== null && (d.load.protocol ?? 'http1') === 'http1' && d.load.connections !== 'new')
    parts.push(`${c.idleClosed} idle connections closed`);
  const ms = (x: number | null) => (x === null ? '-' : String(x));
  if (c.eventLoopDelayMs && c.scheduleLagMs)
    parts.push(
      `its event-loop delay p50 ${ms(c.eventLoopDelayMs.p50Ms)} / p99 ${ms(c.eventLoopDelayMs.p99Ms)} / max ${ms(c.eventLoopDelayMs.maxMs)} ms, schedule lag p99 ${ms(c.scheduleLagMs.p99Ms)} / max ${ms(c.scheduleLagMs.maxMs)} ms`,
    );
  else parts.push('its event-loop delay and schedule lag not measured');
  // Absent in documents from before it was read.
  if (c.cpu !== undefined)
    // A worker thread's cgroup is the runner's, shared with whatever else runs in it (on a
    // machine without cgroups of its own: every process), so its use is not the load's alone.
    parts.push(
      `${c.ranIn === 'load-pod' ? "its container's cgroup" : "the runner's cgroup (every process in it)"}: ${cpuWords(c.cpu)}`,
    );
  return `client: ${parts.join('; ')}`;
}

/**
 * One line per load Pod when the load was split (--load-pods N) or a Pod's part is not whole:
 * its share, what arrived of what it sent, how it ended, its clock shift. None otherwise (one
 * Pod that ran to the end says nothing the client line does not).
 */
export function loadPodLines(d: RolloutDocument): string[] {
  const pods = d.load.pods ?? [];
  const whole = (p: (typeof pods)[number]) => p.ended !== 'ended-early' && p.notReceived === 0;
  if (pods.length < 2 && pods.every(whole)) return [];
  return pods.map((p) => {
    const parts = [
      `${p.rate}/s`,
      p.connections === 'new' ? 'a new connection each' : `${p.connections} connections`,
      `${p.records} records of ${p.sent} sent`,
      p.ended === 'ended-early'
        ? `ended early at ${((p.endedAtMs ?? 0) / 1000).toFixed(1)} s${p.trailerRecords === null ? ' (no trailer)' : ''}`
        : p.ended,
    ];
    if (p.notReceived > 0) parts.push(`${p.notReceived} records never arrived`);
    if (p.fellBehind) parts.push(`fell behind (schedule lag p99 ${p.client?.scheduleLagMs.p99Ms ?? '-'} ms)`);
    if (p.clockShiftMs !== null) parts.push(`clock shift ${p.clockShiftMs} ms`);
    // Its own schedule lag and CPU cgroup, from its trailer: the client line says the worst lag
    // and the most throttled cgroup of all the Pods (combineClientFigures), so a Pod that kept up
    // beside one the kernel throttled is told apart here. Each Pod is its own container's cgroup
    // (its 500m limit, src/platform/kube/load-pod.ts); absent in documents from before it was
    // read, and nothing when no trailer came (said above: no trailer).
    const own: string[] = [];
    const c = p.client;
    if (c && !p.fellBehind)
      own.push(`schedule lag p99 ${c.scheduleLagMs.p99Ms ?? '-'} / max ${c.scheduleLagMs.maxMs ?? '-'} ms`);
    if (c && c.cpu !== undefined) own.push(`its container's cgroup: ${cpuWords(c.cpu)}`);
    return `load Pod ${p.name}: ${[parts.join(', '), ...own].join('; ')}`;
  });
}
