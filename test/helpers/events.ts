// Builds event lists for unit tests of the conclusion: the same shapes the protocol records.
import type { RunEvent } from '../../src/experiment/run-document.js';

export const UID = '11111111-2222-4333-8444-555555555555';
export const OTHER = '99999999-2222-4333-8444-555555555555';
export const WORK = 'work-abc';

export function events(
  ...list: Array<[number, RunEvent['source'], string, Record<string, unknown>?]>
): RunEvent[] {
  return list
    .sort((a, b) => a[0] - b[0])
    .map(([at, source, type, data], i) => ({ id: `e${i + 1}`, at, source, type, data: data ?? {} }));
}

const ep = (ready: boolean, serving: boolean, terminating: boolean) => ({
  addresses: ['127.0.0.9'],
  conditions: { ready, serving, terminating },
  targetRef: { kind: 'Pod', name: 'work', uid: UID },
});

/** A drain run's evidence: ready, work, accepted, deleted, terminating, completed, exit 0. */
export function finishedRun(overrides: { outcome?: Record<string, unknown>; exitCode?: number } = {}) {
  return events(
    [5, 'pod', 'ADDED', { uid: UID, podIP: '127.0.0.9', containerState: null }],
    [1000, 'endpointslice', 'MODIFIED', { podEndpoint: ep(true, true, false) }],
    [1200, 'client', 'service-ready', { uid: UID, attempts: 3 }],
    [1201, 'client', 'work-sent', { id: WORK }],
    [1202, 'client', 'work-connected', { localPort: 40000 }],
    [
      1203,
      'proxy',
      'connection-routed',
      { clientPort: 40000, endpoint: '127.0.0.9:8080', podUid: UID, fallback: false },
    ],
    [1205, 'server', 'request-accepted', { id: WORK, uid: UID }],
    [1206, 'client', 'acceptance-proven', { via: 'state', uid: UID, active: 1 }],
    [1207, 'runner', 'delete-requested', { gracePeriodSeconds: 5 }],
    [1310, 'endpointslice', 'MODIFIED', { podEndpoint: ep(false, true, true) }],
    [1600, 'endpointslice', 'MODIFIED', { podEndpoint: ep(false, false, true) }],
    [
      3205,
      'client',
      'work-outcome',
      overrides.outcome ?? {
        outcome: 'completed',
        status: 200,
        body: { status: 'done', id: WORK, uid: UID },
        bodyUid: UID,
        error: null,
        bytesReceived: 190,
        localPort: 40000,
      },
    ],
    [
      4000,
      'pod',
      'MODIFIED',
      {
        uid: UID,
        containerState: {
          terminated: {
            exitCode: overrides.exitCode ?? 0,
            reason: overrides.exitCode ? 'Error' : 'Completed',
          },
        },
      },
    ],
    [
      4030,
      'pod',
      'DELETED',
      {
        uid: UID,
        containerState: {
          terminated: {
            exitCode: overrides.exitCode ?? 0,
            reason: overrides.exitCode ? 'Error' : 'Completed',
          },
        },
      },
    ],
    [4100, 'endpointslice', 'MODIFIED', { podEndpoint: null }],
  );
}
