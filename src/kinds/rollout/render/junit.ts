// `draincheck rollout --junit FILE`: one testcase per rollout (per policy with --compare), in
// the JUnit XML of src/report/junit.ts. A rollout fails on its gate (--max-failures, ./gate.ts)
// with the failure classes in the message; without a gate it passes and says what failed; an
// incomplete rollout is an error.
import type { JUnitCase, JUnitSuite } from '../../../report/junit.js';
import type { RolloutDocument } from '../document.js';
import { exceededLimits, type FailureLimit } from '../gate.js';
import { sentenceOf, strainWords } from '../compare-strain.js';
import { abandonedAtStop, classCountNote, failedShown } from '../explain.js';

// An incomplete run's requests in flight at its stop are said apart, as the table and the page
// say them: abandoned by draincheck, not failed by the server.
const classes = (d: RolloutDocument): string =>
  Object.entries(d.totals.failures)
    .filter(([, v]) => (v ?? 0) > 0)
    .map(([k, v]) => `${k} ${v}${classCountNote(d, k)}`)
    .join(', ') || 'none';

/** "N requests, M failed", the failed counted as the table counts them (failedShown). */
const counts = (d: RolloutDocument): string => {
  const abandoned = abandonedAtStop(d);
  return `${d.totals.requests} requests, ${failedShown(d)} failed${abandoned > 0 ? `, ${abandoned} abandoned in flight at the stop` : ''}`;
};

const durationS = (d: RolloutDocument): number => {
  if (!d.finishedAt) return 0;
  const ms = Date.parse(d.finishedAt) - Date.parse(d.startedAt);
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

function evidence(d: RolloutDocument): string {
  const byPhase = Object.entries(d.failuresByPhase)
    .map(
      ([phase, row]) =>
        `${phase}: ${Object.entries(row ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    )
    .join('; ');
  return [
    sentenceOf(d),
    d.compare?.strain?.strained ? `shared strain: ${strainWords(d.compare.strain)}` : '',
    `${counts(d)}; failures by class: ${classes(d)}`,
    byPhase ? `by the phase of the Pod that took them: ${byPhase}` : '',
    `records: ${d.records.file}; run ${d.runId}`,
  ]
    .filter(Boolean)
    .join('\n');
}

const limitText = (l: FailureLimit): string =>
  `${l.failureClass === null ? '' : `${l.failureClass}=`}${l.max}`;

export function rolloutJUnit(docs: readonly RolloutDocument[], limits: readonly FailureLimit[]): JUnitSuite {
  const cases = docs.map((d): JUnitCase => {
    const base = { name: d.scenario.name, classname: 'draincheck.rollout', timeS: durationS(d) };
    if (!d.complete)
      return {
        ...base,
        result: {
          kind: 'error',
          type: 'incomplete',
          message: `rollout incomplete: ${d.incompleteReason ?? 'no reason given'}`,
          text: evidence(d),
        },
      };
    const exceeded = exceededLimits(d.totals, [...limits]);
    if (exceeded.length)
      return {
        ...base,
        result: {
          kind: 'failure',
          type: 'max-failures',
          message: `${exceeded.join('; ')}; failures by class: ${classes(d)}`,
          text: evidence(d),
        },
      };
    return {
      ...base,
      result: {
        kind: 'passed',
        output: `${counts(d)} (${classes(d)}): ${sentenceOf(d)}`,
      },
    };
  });
  const d0 = docs[0];
  return {
    name: 'draincheck rollout',
    timestamp: d0?.startedAt ?? '',
    timeS: Math.max(0, ...docs.map(durationS)),
    properties: {
      runId: d0?.runId ?? '',
      platform: d0?.platform.name ?? 'unknown',
      'max-failures': limits.map(limitText).join(' ') || 'none (no gate: every complete rollout passes)',
      ...(d0
        ? {
            replicas: String(d0.deployment.replicas),
            maxSurge: String(d0.deployment.maxSurge),
            maxUnavailable: String(d0.deployment.maxUnavailable),
            rate: String(d0.load.rate),
            connections: String(d0.load.connections),
            workMs: d0.load.workMs,
          }
        : {}),
    },
    cases,
  };
}
