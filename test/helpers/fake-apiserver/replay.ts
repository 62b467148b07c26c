// Routes that serve one recorded run: the lists taken before the Pod existed, then the
// recorded watch events after whatever resourceVersion the client asks from (so a reopened
// watch resumes exactly where the last one stopped), the DELETE response, the followed log.
// Namespace and names in the path are not checked: the recorded objects answer for any.
import type http from 'node:http';
import type { FakeApiServer, SeenRequest } from './server.js';
import { isList, isWatch } from './server.js';
import { recordedError, send, sendJson, stream, type RecordedRun, type WatchLine } from './recorded.js';

export interface ReplayOptions {
  /** Cut the first watch of that kind after n events (a dropped connection). */
  cut?: { pods?: number; slices?: number; events?: number };
  /** Cut in the middle of the next event's line rather than between lines. */
  cutMidLine?: boolean;
  /** Answer the n-th watch (1-based) of that kind with the recorded too-old (410) ERROR. */
  expire?: { pods?: number; slices?: number };
  /** What a relist after the expiry returns (default: the lists taken before the Pod existed). */
  relist?: { pods?: Buffer; slices?: Buffer };
}

const ns = '/api/v1/namespaces/[^/]+';
export const paths = {
  pods: new RegExp(`^${ns}/pods$`),
  pod: new RegExp(`^${ns}/pods/[^/]+$`),
  log: new RegExp(`^${ns}/pods/[^/]+/log$`),
  slices: /^\/apis\/discovery\.k8s\.io\/v1\/namespaces\/[^/]+\/endpointslices$/,
  events: new RegExp(`^${ns}/events$`),
};

export function serveRun(
  server: FakeApiServer,
  run: RecordedRun,
  options: ReplayOptions = {},
): { podGone: () => boolean } {
  let gone = false;
  const watches = { pods: 0, slices: 0, events: 0 };
  const lists = { pods: 0, slices: 0 };
  const watchRoute =
    (kind: 'pods' | 'slices' | 'events', recorded: WatchLine[]) =>
    async (req: SeenRequest, res: http.ServerResponse) => {
      watches[kind] += 1;
      if (kind !== 'events' && options.expire?.[kind] === watches[kind]) {
        return send(
          res,
          recordedError(kind === 'pods' ? 'watch-pods-too-old-rv' : 'watch-endpointslices-too-old-rv'),
        );
      }
      const from = Number(req.query.get('resourceVersion') ?? '0');
      const after = recorded.filter((l) => l.rv > from);
      const cut = watches[kind] === 1 ? options.cut?.[kind] : undefined;
      if (cut === undefined)
        return stream(
          res,
          after.map((l) => l.raw),
        );
      const partial = options.cutMidLine ? after[cut]?.raw.subarray(0, 40) : undefined;
      return stream(
        res,
        after.slice(0, cut).map((l) => l.raw),
        { then: 'cut', partial },
      );
    };
  const listRoute =
    (kind: 'pods' | 'slices', before: Buffer) => (_req: SeenRequest, res: http.ServerResponse) => {
      lists[kind] += 1;
      sendJson(res, 200, lists[kind] > 1 ? (options.relist?.[kind] ?? before) : before);
    };
  const firstEventRv = run.events[0]?.rv ?? 1;
  server
    .on('GET', paths.pods, watchRoute('pods', run.pods), isWatch)
    .on('GET', paths.pods, listRoute('pods', run.podsListBefore), isList)
    .on('GET', paths.slices, watchRoute('slices', run.slices), isWatch)
    .on('GET', paths.slices, listRoute('slices', run.slicesListBefore), isList)
    .on('GET', paths.events, watchRoute('events', run.events), isWatch)
    // No events list was recorded (the watch started from "a list taken just before"); this
    // is that list's shape per the API reference: an empty EventList at the preceding version.
    .on(
      'GET',
      paths.events,
      (_r, res) =>
        sendJson(res, 200, {
          kind: 'EventList',
          apiVersion: 'v1',
          metadata: { resourceVersion: String(firstEventRv - 1) },
          items: [],
        }),
      isList,
    )
    .on('DELETE', paths.pod, (_r, res) => sendJson(res, 200, run.podDelete))
    .on('GET', paths.pod, (_r, res) => {
      if (gone) return sendJson(res, 404, run.podGone);
      // Before the log has ended: the Pod with its container running (the last such event).
      const running = [...run.pods].reverse().find((l) => JSON.stringify(l.object).includes('"running":'));
      sendJson(res, 200, running?.object ?? {});
    })
    .on('GET', paths.log, async (_r, res) => {
      await stream(res, [run.log ?? Buffer.alloc(0)], {
        headers: { 'content-type': 'text/plain' },
        newlines: false,
        then: 'end',
      });
      gone = true;
    });
  return { podGone: () => gone };
}
