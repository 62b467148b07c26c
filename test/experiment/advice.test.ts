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
