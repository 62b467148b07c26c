// The rollout's sentence from its counts: each failure class with its cause, and a connect
// timeout read from the phase of the Pod it was sent to — never a torn-down network asserted
// where the evidence is a ready Pod or no Pod at all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodPhase, Tally } from '../../../src/kinds/rollout/document.js';
import {
  concludeRollout,
  explainFailures,
  ingressAttemptsReading,
  proxyIdleRaceWords,
} from '../../../src/kinds/rollout/explain.js';
import { beforeRollout } from '../../../src/kinds/rollout/ingress-evidence.js';
import { serverFailureClasses, type FailureClass } from '../../../src/probe/load/record.js';
import type { ResolvedScenario } from '../../../src/workload/scenario.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };
const scenario = { onSigterm: 'drain' } as ResolvedScenario;
const tally = (failures: Partial<Record<FailureClass, number>>): Tally => {
  const failed = Object.values(failures).reduce((a, n) => a + (n ?? 0), 0);
  return { requests: 1000, failed, outcomes: {}, failures, latency: empty, sendLag: empty };
};
type ByPhase = Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>;
const explain = (failures: Partial<Record<FailureClass, number>>, byPhase: ByPhase) =>
  explainFailures(tally(failures), byPhase, scenario, null);

test('connect-timeout sent to a ready Pod: a full accept queue or a lost SYN, not a torn-down network', () => {
  const s = explain({ 'connect-timeout': 2 }, { ready: { 'connect-timeout': 2 } });
  assert.match(
    s,
    /2 connect-timeout — new connections got no answer to the SYN within the connect timeout \(2 sent to a ready Pod: its accept queue was full or the SYN was lost\)/,
  );
  assert.doesNotMatch(s, /torn down|still named/);
});

test('connect-timeout graded by phase: gone (the rules or a stale conntrack entry still named it), terminating, no Pod known (not observed)', () => {
  const s = explain(
    { 'connect-timeout': 6 },
    {
      gone: { 'connect-timeout': 3 },
      terminating: { 'connect-timeout': 1 },
      unknown: { 'connect-timeout': 2 },
    },
  );
  assert.match(s, /3 sent to a Pod already gone: the rules or a stale conntrack entry still named it/);
  assert.match(s, /1 sent to a terminating Pod: its accept queue was full or its network already torn down/);
  assert.match(s, /2 with no Pod known: the cause is not observed/);
  // Without phases (a document that has none), the class alone asserts no cause.
  const bare = explain({ 'connect-timeout': 1 }, {});
  assert.match(
    bare,
    /1 connect-timeout — new connections got no answer to the SYN within the connect timeout\./,
  );
});

test('stale-conntrack is named as a presumption; every class has its cause', () => {
  const s = explain({ 'stale-conntrack': 4 }, { unknown: { 'stale-conntrack': 4 } });
  assert.match(
    s,
    /4 stale-conntrack — [^;]*presumed: the port’s conntrack entry still sent the SYN to that Pod/,
  );
  for (const cls of serverFailureClasses) {
    const one = explain({ [cls]: 1 }, {});
    assert.match(one, new RegExp(`1 of 1000 requests failed with --on-sigterm drain: 1 ${cls} — \\w`), cls);
    assert.doesNotMatch(one, /undefined/, cls);
  }
});

test('not sent is said apart from the failures, with its reading; a load that fell behind makes the sentence say so first', () => {
  const base = { ...tally({ 'accepted-cut': 3 }), notSent: 200 };
  const pool = {
    cause: 'pool' as const,
    loadFellBehind: true,
    words: 'the pool of 16 connections were too few for the load',
  };
  const s = explainFailures(base, {}, scenario, null, { notSent: pool });
  assert.match(
    s,
    /^Inconclusive — the load fell behind \(the pool of 16 connections were too few for the load\): 3 of the 800 requests sent failed/,
  );
  assert.match(s, /200 of 1000 requests were not sent/);
  assert.doesNotMatch(s, /took too long|not-sent —/);
  const service = {
    cause: 'service' as const,
    loadFellBehind: false,
    words: 'the Service was slow to take connections or to answer',
  };
  const t = explainFailures(base, {}, scenario, null, { notSent: service });
  assert.doesNotMatch(t, /Inconclusive/);
  assert.match(t, /200 of 1000 requests were not sent — the Service was slow/);
  // A document from before not-sent was kept apart: still said apart, not as a failure.
  const old = explainFailures(tally({ 'not-sent': 5, 'accepted-cut': 1 }), {}, scenario, null);
  assert.match(
    old,
    /1 of the 995 requests sent failed[^:]*: 1 accepted-cut .*; 5 of 1000 requests were not sent/,
  );
});

test('protocol errors are named with what was wrong; an accepted-cut names no stopped server', () => {
  const s = explainFailures(tally({ 'protocol-error': 3, 'accepted-cut': 1 }), {}, scenario, null, {
    protocolErrors: { HPE_INVALID_STATUS: 2, HPE_CR_EXPECTED: 1 },
  });
  assert.match(
    s,
    /3 protocol-error — responses broke their protocol [^:]*: 2 HPE_INVALID_STATUS, 1 HPE_CR_EXPECTED/,
  );
  assert.doesNotMatch(s, /server stopped/);
});

test('behind an ingress: none failed at the client, but failed attempts in its log are said, not "every Pod kept its requests"', () => {
  const attempts = ingressAttemptsReading([
    { phase: 'gone', cause: 'refused', count: 13 },
    { phase: 'terminating', cause: 'refused', count: 4 },
    { phase: 'ready', cause: 'reset', count: 1 },
  ]);
  assert.deepEqual(attempts, { failed: 18, causes: { refused: 17, reset: 1 }, atDeletedPods: 17 });
  const s = explainFailures(tally({}), {}, scenario, null, { ingress: 'nginx', ingressAttempts: attempts });
  assert.match(
    s,
    /none of \d+ requests failed, but the ingress's log shows 18 failed upstream attempts \(17 refused, 1 reset; 17 at Pods already deleted\) that it answered by trying the next upstream/,
  );
  assert.doesNotMatch(s, /every Pod replaced kept/);
  // No failed attempt: the plain sentence.
  const clean = explainFailures(tally({}), {}, scenario, null, {
    ingress: 'nginx',
    ingressAttempts: ingressAttemptsReading([]),
  });
  assert.match(clean, /every Pod replaced kept its accepted requests/);
});

test('--lb-deregistration-ms: the load balancer is named only where attempts failed at deleted Pods', () => {
  const facts = (atDeleted: number, lb: number) =>
    concludeRollout({
      totals: tally({ 'http-5xx': 3 }),
      failuresByPhase: {},
      scenario,
      incompleteReason: null,
      pods: [],
      context: {
        ingress: 'haproxy',
        ingressAttempts: { failed: 3, causes: { refused: 3 }, atDeletedPods: atDeleted },
        lbDeregistrationMs: lb,
      },
    });
  assert.match(
    facts(3, 2500),
    /The load balancer is the slowest layer: .*for 2500 ms .*3 upstream attempts failed at Pods already deleted/,
  );
  assert.doesNotMatch(facts(0, 2500), /load balancer/, 'no attempt at a deleted Pod: no claim');
  assert.doesNotMatch(facts(3, 0), /load balancer/, 'no load balancer layer');
});

test('an interrupted run: requests in flight at the stop are abandoned by the run, not failures of the server', () => {
  const interrupted = explainFailures(
    tally({ unanswered: 99 }),
    { ready: { unanswered: 99 } },
    scenario,
    'interrupted',
  );
  assert.match(
    interrupted,
    /^Incomplete \(interrupted\): none of the 901 requests that ended failed; 99 were in flight when the run stopped \(interrupted\) and were abandoned unanswered: the run's stop, not a failure of the server/,
  );
  assert.doesNotMatch(interrupted, /held them past it/);
  const mixed = explainFailures(
    tally({ unanswered: 10, 'accepted-cut': 3 }),
    { ready: { unanswered: 10, 'accepted-cut': 3 } },
    scenario,
    'interrupted',
  );
  assert.match(mixed, /3 of the 990 requests that ended failed with --on-sigterm drain: 3 accepted-cut/);
  assert.match(mixed, /10 were in flight when the run stopped/);
  // A whole run: the load waited for them at its end, so unanswered is the server holding them.
  const whole = explain({ unanswered: 5 }, { ready: { unanswered: 5 } });
  assert.match(
    whole,
    /5 of 1000 requests failed with --on-sigterm drain: 5 unanswered — [^;]*held them past it/,
  );
});

test('the idle race behind nginx: counted from its log before the rollout (ready Pods, closed or reset), retried vs 502, and the rule', () => {
  const attempt = (
    phase: 'ready' | 'terminating',
    status: number | null,
    cause: 'closed' | 'reset' | 'refused' | null,
  ) => ({
    phase,
    status,
    cause,
  });
  const counted = beforeRollout(
    [
      // A POST nginx did not pass on: its 502.
      { status: 502, startMs: 100, attempts: [attempt('ready', 502, 'closed')] },
      // A GET passed on to a new connection: two attempts.
      { status: 200, startMs: 200, attempts: [attempt('ready', 502, 'reset'), attempt('ready', 200, null)] },
      // Not the race: refused; at a terminating Pod; after the trigger.
      { status: 502, startMs: 300, attempts: [attempt('ready', 502, 'refused')] },
      { status: 502, startMs: 400, attempts: [attempt('terminating', 502, 'closed')] },
      { status: 502, startMs: 5000, attempts: [attempt('ready', 502, 'closed')] },
    ],
    1000,
  );
  assert.deepEqual(counted, { closed: 2, retried: 1, answered5xx: 1 });
  assert.deepEqual(
    beforeRollout([{ status: 502, startMs: 5000, attempts: [attempt('ready', 502, 'closed')] }], null),
    {
      closed: 1,
      retried: 0,
      answered5xx: 1,
    },
  );

  const race = (upstreamKeepaliveTimeoutMs: number, serverCloseMs: number | null) => ({
    before: 1,
    serverKeepAliveTimeoutMs: 1,
    serverCloseMs,
    clientIdleTimeoutMs: 60_000,
    proxy: { upstreamKeepaliveTimeoutMs, ...counted },
  });
  const s = explainFailures(tally({ 'http-5xx': 1 }), {}, scenario, null, {
    ingress: 'nginx',
    idleRace: race(60_000, 1001),
  });
  assert.match(s, /1 of them before the rollout began, no Pod terminating: the idle race behind the ingress/);
  assert.match(s, /nginx's upstream keepalive_timeout \(60000 ms\) not below that/);
  assert.match(s, /1 passed on to a new connection \(two attempts in its log/);
  assert.match(
    s,
    /1 answered 502 \(a POST already sent is not passed on: proxy_next_upstream without non_idempotent\)/,
  );
  assert.match(
    s,
    /the rule: the proxy's upstream idle timeout shorter than the server's \(--ingress-upstream-keepalive-timeout-ms below 1001 ms\)/,
  );
  // Below the server's close: not the race between them.
  assert.match(proxyIdleRaceWords(race(500, 1001)), /not the idle race between them/);
  // Your own server: its close is not known.
  assert.match(proxyIdleRaceWords(race(60_000, null)), /the idle race behind the ingress, presumably/);
  // non_idempotent: POSTs are passed on too.
  assert.match(proxyIdleRaceWords(race(60_000, 1001), true), /non_idempotent: a POST too/);
  // Nothing in the log: nothing said.
  assert.equal(
    proxyIdleRaceWords({
      ...race(60_000, 1001),
      proxy: { upstreamKeepaliveTimeoutMs: 60_000, closed: 0, retried: 0, answered5xx: 0 },
    }),
    '',
  );
  // All GETs, all passed on: the client saw none, nginx's log says why.
  const hidden = explainFailures(tally({}), {}, scenario, null, {
    ingress: 'nginx',
    ingressAttempts: { failed: 1, causes: { closed: 1 }, atDeletedPods: 0 },
    idleRace: {
      ...race(60_000, 1001),
      before: 0,
      proxy: { upstreamKeepaliveTimeoutMs: 60_000, closed: 1, retried: 1, answered5xx: 0 },
    },
  });
  assert.match(
    hidden,
    /none of 1000 requests failed, but the ingress's log shows 1 failed upstream attempts/,
  );
  assert.match(hidden, /: the idle race behind the ingress — /);
});

test('the race at SIGTERM: reused connections closed at a terminating Pod under drain name the idle close and --drain-idle-ms; not with the window above the client’s idle timeout, nor for exit', () => {
  const failures = { 'reused-connection-closed': 3 };
  const byPhase: ByPhase = { terminating: { 'reused-connection-closed': 3 } };
  const idleRace = {
    before: 0,
    serverKeepAliveTimeoutMs: 5000,
    serverCloseMs: 6000,
    clientIdleTimeoutMs: 5000,
  };
  const say = (over: Partial<ResolvedScenario>, connection = 3) =>
    explainFailures(
      tally(failures),
      byPhase,
      { onSigterm: 'drain', drainIdleMs: 0, ...over } as ResolvedScenario,
      null,
      { podFromConnection: { 'reused-connection-closed': connection }, idleRace },
    );
  const at = say({});
  assert.match(at, /the race at SIGTERM \(read from the policy, not observed per request\)/);
  assert.match(at, /closed its idle keep-alive connections as it stopped listening \(--drain-idle-ms 0\)/);
  assert.match(at, /longer than the client's idle timeout \(5000 ms: --drain-idle-ms above it\)/);
  const short = say({ drainIdleMs: 2000 });
  assert.match(
    short,
    /still idle when its --drain-idle-ms 2000 ended, which is not longer than the client's idle timeout \(5000 ms\)/,
  );
  assert.doesNotMatch(
    say({ drainIdleMs: 6000 }),
    /race at SIGTERM/,
    'the client closes first: the cause is not this',
  );
  assert.doesNotMatch(say({ onSigterm: 'exit' }), /race at SIGTERM/);
  assert.doesNotMatch(say({}, 0), /race at SIGTERM/, 'no connection evidence: not said');
  const ready = explainFailures(
    tally(failures),
    { ready: { 'reused-connection-closed': 3 } },
    { onSigterm: 'drain', drainIdleMs: 0 } as ResolvedScenario,
    null,
    { podFromConnection: { 'reused-connection-closed': 3 }, idleRace },
  );
  assert.doesNotMatch(ready, /race at SIGTERM/, 'sent to ready Pods: not the SIGTERM race');
});
