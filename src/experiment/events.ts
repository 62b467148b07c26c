// The run's events as types: one discriminated union on `source` and `type`, with the data
// each producer writes (docs/RUN-DOCUMENT.md, "Events"). The stored shape stays
// `{source, type, data: Record<string, unknown>}` — a run document read back is untrusted, so
// the schema cannot promise more — and readEvent() is the one place that checks a stored
// event against its declared fields. Consumers switch on the typed union instead of matching
// strings and casting `data.x as number`; an event that is unknown or malformed comes back as
// an UnknownEvent, which every renderer still shows raw.
import { requestOutcomes } from '../probe/client-events.js';
import type { RunEvent } from './run-document.js';
import type { EventSource } from './event-log.js';

/** What a field may hold. Absent and `null` both read as `null`; anything else of another type makes the event malformed. */
type FieldKind =
  'string' | 'number' | 'boolean' | 'object' | 'array' | 'string|number' | 'unknown' | readonly string[];
type Fields = Readonly<Record<string, FieldKind>>;

type FieldType<K> = K extends 'string'
  ? string
  : K extends 'number'
    ? number
    : K extends 'boolean'
      ? boolean
      : K extends 'object'
        ? Readonly<Record<string, unknown>>
        : K extends 'array'
          ? readonly unknown[]
          : K extends 'string|number'
            ? string | number
            : K extends readonly (infer U)[]
              ? U
              : unknown;
type DataOf<F extends Fields> = { readonly [K in keyof F]: FieldType<F[K]> | null };

/** Fields every client event carries: the client's own clock and wall time. */
const clientClock = { clientMs: 'number', time: 'string' } as const;
/** What the client keeps of a request's end (probe/outcome.ts classifyWork), each request alike. */
const requestEnd = {
  ...clientClock,
  id: 'string',
  outcome: requestOutcomes,
  status: 'number',
  body: 'unknown',
  bodyNote: 'string',
  bodyUid: 'string',
  error: 'object',
  bytesReceived: 'number',
  localPort: 'number',
} as const;
/** The same, for a request of the run's protocol (its HTTP/2, gRPC or WebSocket facts). */
const protocolRequestEnd = { ...requestEnd, h2: 'object', grpc: 'object', ws: 'object' } as const;
/** Fields every journal line carries (src/server/journal.ts). */
const journalLine = { time: 'string', uid: 'string' } as const;
const podData = {
  name: 'string',
  uid: 'string',
  resourceVersion: 'string',
  phase: 'string',
  ready: 'string',
  podIP: 'string',
  deletionTimestamp: 'string',
  deletionGracePeriodSeconds: 'number',
  containerState: 'object',
  containerReady: 'boolean',
  annotations: 'object',
  /** Every container's state by name, in a Pod with sidecars (observe.ts). */
  containers: 'array',
} as const;
const sliceData = {
  name: 'string',
  resourceVersion: 'string',
  endpoints: 'array',
  podEndpoint: 'object',
} as const;
/** core/v1 Events (kube) with their placement on the run's clock (observe.ts placeEvent). */
const coreEventData = {
  message: 'string',
  count: 'number',
  eventType: 'string',
  involvedObject: 'object',
  reportingComponent: 'string',
  placedBy: ['eventTime', 'lastTimestamp'],
  timePrecision: ['microsecond', 'second'],
  arrivedAt: 'number',
  clamped: 'boolean',
} as const;

/**
 * Every event type each source writes, with the fields a reader may rely on (others are kept
 * in `raw`). `events` (core/v1 Event reasons) is open vocabulary: any reason is known.
 */
export const eventSpecs = {
  runner: {
    'run-started': { runId: 'string', scenario: 'string', platform: 'string', startedAt: 'string' },
    /** upstream: `service-cluster-ip` where the proxy sends to the Service's ClusterIP (absent: the Pods' addresses). */
    'ingress-started': { kind: 'string', url: 'string', model: 'string', upstream: 'string' },
    phase: { name: 'string' },
    'observer-error': { observer: 'string', message: 'string', code: 'string' },
    'phase-timeout': { phase: 'string', limitMs: 'number', message: 'string' },
    'replacement-applied': { pod: 'string', uid: 'string' },
    'replacement-ready': { pod: 'string', uid: 'string', endpoint: 'object' },
    'replacement-timeout': { pod: 'string', limitMs: 'number', message: 'string' },
    'delete-requested': { namespace: 'string', pod: 'string', gracePeriodSeconds: 'number' },
    'delete-returned': { deletionTimestamp: 'string', deletionGracePeriodSeconds: 'number' },
    'platform-error': { code: 'string', message: 'string' },
    interrupted: { signal: 'string' },
    'cleanup-error': { message: 'string' },
    'lines-not-kept': {
      kind: 'string',
      lines: 'number',
      chars: 'number',
      firstAt: 'number',
      lastAt: 'number',
      byEvent: 'object',
    },
    'run-finished': { complete: 'boolean' },
  },
  client: {
    'client-started': { ...clientClock, serviceUrl: 'string', workId: 'string', workMs: 'number' },
    healthz: {
      ...clientClock,
      attempt: 'number',
      status: 'number',
      uid: 'string',
      localPort: 'number',
      error: 'object',
    },
    'service-ready': { ...clientClock, uid: 'string', attempts: 'number', localPort: 'number' },
    'service-ready-timeout': {
      ...clientClock,
      attempts: 'number',
      limitMs: 'number',
      last: 'string',
      diagnosis: 'object',
    },
    'work-sent': {
      ...clientClock,
      id: 'string',
      ms: 'number',
      path: 'string',
      method: 'string',
      protocol: 'string',
    },
    'work-connected': { ...clientClock, id: 'string', localPort: 'number' },
    'work-written': { ...clientClock, id: 'string', localPort: 'number', bytes: 'number' },
    'server-socket': {
      ...clientClock,
      id: 'string',
      localPort: 'number',
      found: 'boolean',
      local: 'string',
      peer: 'string',
      recvQ: 'number',
      bytesReceived: 'number',
      bytesSent: 'number',
      requestBytes: 'number',
      accepted: 'boolean',
    },
    state: {
      ...clientClock,
      poll: 'number',
      status: 'number',
      active: 'number',
      uid: 'string',
      localPort: 'number',
      error: 'object',
    },
    // via: `state` (GET /state polls) or `accepted-message` (--protocol ws: the server's
    // accepted message on the work's socket, afterMs after the work message went).
    'acceptance-proven': {
      ...clientClock,
      via: 'string',
      active: 'number',
      uid: 'string',
      polls: 'number',
      afterMs: 'number',
    },
    'acceptance-timeout': {
      ...clientClock,
      polls: 'number',
      limitMs: 'number',
      lastState: 'unknown',
      readyUid: 'string',
      reason: 'string',
    },
    'work-response-started': { ...clientClock, id: 'string', status: 'number' },
    'work-goaway': {
      ...clientClock,
      id: 'string',
      localPort: 'number',
      code: 'number',
      codeName: 'string',
      lastStreamId: 'number',
      afterConnectMs: 'number',
    },
    'work-channel-state': {
      ...clientClock,
      id: 'string',
      localPort: 'number',
      state: 'string',
      afterMs: 'number',
    },
    'work-outcome': protocolRequestEnd,
    // --protocol ws: the work's socket ended (src/probe/ws-exchange.ts WsClose).
    'work-ws-closed': {
      ...clientClock,
      id: 'string',
      localPort: 'number',
      code: 'number',
      codeName: 'string',
      reason: 'string',
      closeFrame: 'boolean',
      by: ['server', 'client'],
      afterMs: 'number',
      afterDone: 'boolean',
    },
    'replacement-answered': { ...clientClock, uid: 'string', polls: 'number', localPort: 'number' },
    'replacement-wait-timeout': { ...clientClock, polls: 'number', limitMs: 'number' },
    'new-request-sent': { ...clientClock, id: 'string', ms: 'number', path: 'string', afterMs: 'number' },
    'new-request-connected': { ...clientClock, id: 'string', localPort: 'number' },
    'new-request-outcome': protocolRequestEnd,
    'pooled-request': { ...clientClock, status: 'number', localPort: 'number', error: 'object' },
    // The idle race (ClientPlan.idleRaceAfterMs): the first POST's answer, the second sent, its outcome.
    'idle-race-primed': {
      ...clientClock,
      id: 'string',
      status: 'number',
      bodyUid: 'string',
      localPort: 'number',
      error: 'object',
    },
    'idle-race-sent': { ...clientClock, id: 'string', path: 'string', method: 'string', afterMs: 'number' },
    'idle-race-outcome': requestEnd,
    'reused-request-sent': {
      ...clientClock,
      id: 'string',
      path: 'string',
      afterMs: 'number',
      pooledPort: 'number',
    },
    'reused-request-outcome': {
      ...requestEnd,
      reusedSocket: 'boolean',
      pooledPort: 'number',
      connectionHeader: 'string',
    },
  },
  server: {
    listening: {
      ...journalLine,
      host: 'string',
      port: 'number',
      policy: 'string',
      protocol: 'string',
      name: 'string',
      namespace: 'string',
    },
    // streamId and remotePort: HTTP/2 requests only (the h2c lab server); rpc and remotePort:
    // gRPC calls only (the grpc lab server); transport `ws` and remotePort: WebSocket work messages.
    'request-accepted': {
      ...journalLine,
      id: 'string',
      ms: 'number',
      streamId: 'number',
      rpc: 'string',
      transport: 'string',
      remotePort: 'number',
    },
    'request-finished': {
      ...journalLine,
      id: 'string',
      durationMs: 'number',
      streamId: 'number',
      rpc: 'string',
      transport: 'string',
      remotePort: 'number',
    },
    'request-aborted': {
      ...journalLine,
      id: 'string',
      streamId: 'number',
      rpc: 'string',
      transport: 'string',
      remotePort: 'number',
    },
    signal: { ...journalLine, name: 'string' },
    'drain-started': { ...journalLine, active: 'number' },
    'stopped-listening': { ...journalLine, active: 'number' },
    // via: `tryShutdown` when grpc-js sent it (the grpc lab server; no lastStreamId then), or
    // `after-shutdown` for a connection whose preface came after it (refused, last stream 0).
    'goaway-sent': {
      ...journalLine,
      remotePort: 'number',
      lastStreamId: 'number',
      open: 'number',
      via: 'string',
    },
    // code: the close code a WebSocket ended with (the ws lab server).
    'session-closed': { ...journalLine, remotePort: 'number', streams: 'number', code: 'number' },
    // The ws drain: a close frame to one socket once its accepted work was all done.
    'close-sent': {
      ...journalLine,
      remotePort: 'number',
      code: 'number',
      reason: 'string',
      messages: 'number',
    },
    'request-cut': { ...journalLine, id: 'string' },
    'drain-finished': { ...journalLine, active: 'number', cut: 'array', timedOut: 'boolean' },
    exit: { ...journalLine, code: 'number', active: 'number' },
    /** A line of the server's output that is not a journal line. */
    output: { line: 'string' },
  },
  pod: { ADDED: podData, MODIFIED: podData, DELETED: podData },
  endpointslice: { ADDED: sliceData, MODIFIED: sliceData, DELETED: sliceData },
  // container: the container the record is about, in a Pod with sidecars (absent: the app's).
  kubelet: {
    'prestop-started': { handler: 'string', container: 'string' },
    'prestop-finished': { durationMs: 'number', container: 'string' },
    'signal-sent': { signal: 'string', delivered: 'boolean', afterSeconds: 'number', container: 'string' },
    'container-exited': { exitCode: 'number', signal: 'string|number', pid1: 'boolean', container: 'string' },
    /** A line of a sidecar's own journal (draincheck sidecar-proxy), bounded when read. */
    'sidecar-journal': {
      container: 'string',
      event: 'string',
      id: 'string',
      status: 'number',
      code: 'string',
      /** proxy-signal, proxy-exit: the requests the proxy had in flight then. */
      inFlight: 'number',
    },
    probe: { result: 'string', message: 'string', probe: 'string' },
    'probe-kill': { probe: 'string', message: 'string', gracePeriodSeconds: 'number' },
    /** The port is taken on the shared host network: the Pod waits for another Pod to end. */
    'port-wait': { message: 'string', attempt: 'number' },
  },
  proxy: {
    'connection-routed': { clientPort: 'number', endpoint: 'string', podUid: 'string', fallback: 'boolean' },
    'service-listening': { service: 'string', accepting: 'boolean', mode: 'string' },
    'backend-refused': { clientPort: 'number', endpoint: 'string' },
    'foreign-connections': {
      service: 'string',
      connections: 'number',
      endpoints: 'object',
      sinceMs: 'number',
    },
    'proxy-sync-failed': { service: 'string', mode: 'string', error: 'string' },
    // --ingress: one of the run's requests as the ingress's logs tell it (platform/ingress/evidence.ts).
    'ingress-request': { id: 'string', status: 'number', attempts: 'array', kind: 'string' },
  },
  events: { '*': coreEventData },
} as const satisfies { [S in EventSource]: Readonly<Record<string, Fields>> };

type Specs = typeof eventSpecs;

interface EventBase {
  id: string;
  at: number;
  /** The event as stored, with every field (also those no reader relies on). */
  raw: RunEvent;
}

type KnownOf<S extends EventSource> = {
  [T in keyof Specs[S] & string]: EventBase & {
    known: true;
    source: S;
    type: T extends '*' ? string : T;
    data: Specs[S][T] extends Fields ? DataOf<Specs[S][T]> : never;
  };
}[keyof Specs[S] & string];

/** An event whose source, type and declared fields were checked. */
export type TypedEvent = { [S in EventSource]: KnownOf<S> }[EventSource];

/** An event of a type no producer writes, or with a declared field of the wrong type: shown raw. */
export interface UnknownEvent extends EventBase {
  known: false;
  source: RunEvent['source'];
  type: string;
  /** Why it is not a TypedEvent, e.g. `data.status is string, not number`. */
  problem: string;
}

export type ReadEvent = TypedEvent | UnknownEvent;

/** The typed event of one source and type, e.g. `EventOf<'client', 'work-outcome'>`. */
export type EventOf<S extends EventSource, T extends string> = Extract<TypedEvent, { source: S; type: T }>;

const kindOf = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

function fits(kind: FieldKind, v: unknown): boolean {
  if (kind === 'unknown') return true;
  if (typeof kind !== 'string') return typeof v === 'string' && kind.includes(v);
  if (kind === 'string|number') return typeof v === 'string' || typeof v === 'number';
  if (kind === 'array') return Array.isArray(v);
  if (kind === 'object') return typeof v === 'object' && v !== null && !Array.isArray(v);
  return typeof v === kind;
}

/**
 * The one reading of a stored event: its declared fields checked one by one (never trusting
 * the document), absent ones as null. Never throws.
 */
export function readEvent(e: RunEvent): ReadEvent {
  const unknown = (problem: string): UnknownEvent => ({
    known: false,
    id: e.id,
    at: e.at,
    source: e.source,
    type: e.type,
    raw: e,
    problem,
  });
  const bySource = (eventSpecs as Record<string, Record<string, Fields> | undefined>)[e.source];
  if (!bySource) return unknown(`unknown source ${e.source}`);
  const fields = Object.hasOwn(bySource, e.type) ? bySource[e.type] : bySource['*'];
  if (!fields) return unknown('unknown type');
  const stored: Record<string, unknown> =
    typeof e.data === 'object' && e.data !== null && !Array.isArray(e.data) ? e.data : {};
  const data: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    const v = Object.hasOwn(stored, name) ? stored[name] : undefined;
    if (v === undefined || v === null) {
      data[name] = null;
      continue;
    }
    if (!fits(kind, v)) {
      const expected = typeof kind === 'string' ? kind : kind.join('|');
      return unknown(
        `data.${name} is ${kindOf(v)}${typeof v === 'string' ? ` "${v.slice(0, 40)}"` : ''}, not ${expected}`,
      );
    }
    data[name] = v;
  }
  return { known: true, id: e.id, at: e.at, source: e.source, type: e.type, data, raw: e } as TypedEvent;
}

export function readEvents(events: readonly RunEvent[]): ReadEvent[] {
  return events.map(readEvent);
}

/** The typed events of one source and type, in order. */
export function eventsOf<S extends EventSource, T extends keyof Specs[S] & string>(
  events: readonly ReadEvent[],
  source: S,
  type: T,
): Array<EventOf<S, T>> {
  return events.filter((e): e is EventOf<S, T> => e.known && e.source === source && e.type === type);
}

/** The first typed event of one source and type. */
export function firstOf<S extends EventSource, T extends keyof Specs[S] & string>(
  events: readonly ReadEvent[],
  source: S,
  type: T,
): EventOf<S, T> | undefined {
  return events.find((e): e is EventOf<S, T> => e.known && e.source === source && e.type === type);
}

/** For a `switch` over a typed union: a case a consumer forgot fails to compile here. */
export function assertNever(value: never): never {
  throw new Error(`unhandled event ${JSON.stringify(value)}`);
}

export type Conditions = { ready: boolean | null; serving: boolean | null; terminating: boolean | null };

const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const rec = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** An endpoint's conditions (discovery.k8s.io/v1 EndpointConditions) as booleans or null; null without conditions. */
export function endpointConditions(endpoint: unknown): Conditions | null {
  const c = rec(rec(endpoint)?.conditions);
  return c ? { ready: bool(c.ready), serving: bool(c.serving), terminating: bool(c.terminating) } : null;
}

export interface ContainerStateView {
  kind: 'waiting' | 'running' | 'terminated';
  reason: string | null;
  /** terminated only */
  exitCode: number | null;
  signal: number | string | null;
}

/** A core/v1 ContainerState read: which state, and (terminated) the exit code and reason. */
export function containerStateOf(state: unknown): ContainerStateView | null {
  const s = rec(state);
  if (!s) return null;
  const kind = s.terminated ? 'terminated' : s.running ? 'running' : s.waiting ? 'waiting' : null;
  if (!kind) return null;
  const inner = rec(s[kind]);
  const signal = inner?.signal;
  return {
    kind,
    reason: typeof inner?.reason === 'string' ? inner.reason : null,
    exitCode: typeof inner?.exitCode === 'number' ? inner.exitCode : null,
    signal: typeof signal === 'number' || typeof signal === 'string' ? signal : null,
  };
}
