// Advice from the evidence: for a cut request, the smallest change the kubelet's recorded
// signals and the cut's time support — and none without those events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { events, finishedRun, WORK } from '../helpers/events.js';

const CUT_AT = 3205;
const cut = {
  outcome: 'connection-dropped',
  status: null,
  error: { code: 'ECONNRESET', message: 'socket hang up' },
  bytesReceived: 0,
  localPort: 40000,
};

/** A cut run with the kubelet's signals at the given times (ms). */
function cutRun(signals: { term?: number; kill?: number }): RunEvent[] {
  const base = finishedRun({ outcome: cut }).map(
    ({ at, source, type, data }) => [at, source, type, data] as const,
  );
  const extra: Array<readonly [number, RunEvent['source'], string, Record<string, unknown>]> = [];
  if (signals.term !== undefined)
    extra.push([signals.term, 'kubelet', 'signal-sent', { signal: 'SIGTERM', delivered: true }]);
  if (signals.kill !== undefined)
    extra.push([
      signals.kill,
      'kubelet',
      'signal-sent',
      { signal: 'SIGKILL', delivered: true, afterSeconds: 2 },
    ]);
  return events(
    ...[...base, ...extra].map(
      (e) => [...e] as [number, RunEvent['source'], string, Record<string, unknown>],
    ),
  );
}

const run = (evs: RunEvent[]) =>
  conclude({
    events: evs,
    podName: 'work',
    namespace: 'ns',
    serviceName: 'work',
    workId: WORK,
    scenario: { workMs: 3000, preStopSleepSeconds: 0 },
  });

test('cut at once after SIGTERM: handle SIGTERM', () => {
  const c = run(cutRun({ term: CUT_AT - 20 }));
  assert.equal(c.verdict.kind, 'accepted-request-cut');
  assert.deepEqual(c.advice, {
    code: 'handle-sigterm',
    figures: { cutAfterSigtermMs: 20 },
    sentence: c.advice?.sentence,
  });
  assert.ok(c.verdict.explanation.endsWith(c.advice?.sentence ?? '-'));
});

test("cut later without SIGKILL: the server's own drain timeout, with the measured figure", () => {
  const c = run(cutRun({ term: CUT_AT - 1000 }));
  assert.equal(c.advice?.code, 'raise-drain-timeout');
  assert.equal(c.advice?.figures.cutAfterSigtermMs, 1000);
  assert.match(c.advice?.sentence ?? '', /1000 ms after SIGTERM, without SIGKILL/);
});

test('SIGKILL before the cut: terminationGracePeriodSeconds above the request time', () => {
  const c = run(cutRun({ term: CUT_AT - 2005, kill: CUT_AT - 5 }));
  assert.equal(c.advice?.code, 'raise-grace-period');
  assert.equal(c.advice?.figures.suggestedGraceSeconds, 4);
});

test("no advice without the kubelet's signals, or for a request that finished", () => {
  assert.equal(run(cutRun({})).advice, null);
  assert.equal(run(finishedRun()).advice, null);
});

test('a regular sidecar whose exit was seen late: the proxy’s journal (exited with a request in flight) and the server’s (its peer went) name it; the timing alone does not', () => {
  type Row = [number, RunEvent['source'], string, Record<string, unknown>];
  const signal = (at: number, container: string): Row => [
    at,
    'kubelet',
    'signal-sent',
    { signal: 'SIGTERM', delivered: true, container },
  ];
  const base = finishedRun({ outcome: cut }).map(
    ({ at, source, type, data }) => [at, source, type, data] as Row,
  );
  const proxyExit = (inFlight: number): Row => [
    CUT_AT + 650,
    'kubelet',
    'sidecar-journal',
    { container: 'sidecar', event: 'proxy-exit', inFlight },
  ];
  const aborted: Row = [CUT_AT - 10, 'server', 'request-aborted', { event: 'request-aborted', id: WORK }];
  // The proxy's exit reached the runtime 700 ms after the client saw its socket close (a loaded
  // machine), after the server's: its request gone, the draining server exited at once.
  const sidecarRun = (...journal: Row[]) =>
    run(
      events(
        ...base,
        signal(CUT_AT - 20, 'server'),
        signal(CUT_AT - 20, 'sidecar'),
        ...journal,
        [CUT_AT + 300, 'kubelet', 'container-exited', { container: 'server', exitCode: 0, pid1: false }],
        [CUT_AT + 700, 'kubelet', 'container-exited', { container: 'sidecar', exitCode: 0, pid1: false }],
      ),
    );
  const named = sidecarRun(proxyExit(1), aborted);
  assert.equal(named.advice?.code, 'native-sidecar', JSON.stringify(named.advice));
  assert.deepEqual(named.advice?.figures, { cutAfterSigtermMs: 20, sidecarExitAfterSigtermMs: 720 });
  assert.equal(sidecarRun().advice?.code, 'handle-sigterm', 'no word from either: the cut came at once');
  assert.equal(sidecarRun(proxyExit(1)).advice?.code, 'handle-sigterm', 'the server did not see its peer go');
  assert.equal(
    sidecarRun(proxyExit(0), aborted).advice?.code,
    'handle-sigterm',
    'nothing in flight in the proxy',
  );
});
