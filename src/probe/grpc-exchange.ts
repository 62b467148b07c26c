// One unary Work RPC (`draincheck.lab.v1.Lab/Work`) with @grpc/grpc-js's own client — the one
// Node users run — on a channel of its own, with what a gRPC verdict needs beside the status
// (issue 26, "Traps known before you start"): grpc-js reports a server's forceShutdown as
// CANCELLED, a process exit as UNAVAILABLE "Connection dropped" and a call after either as
// UNAVAILABLE from a refused reconnect, so the status alone does not say what the server did.
// Kept beside it: whether the server's initial metadata came (the lab sends it at acceptance),
// whether the status carried the server's trailers (a status grpc-js makes up carries none),
// the channel's connectivity states during the call (READY → IDLE while the call is open: the
// connection was ended under it — by a GOAWAY when the call still finishes), and the TCP
// connection's ports from grpc-js's channelz (gRFC A14), which the server's journal names too.
import grpc from '@grpc/grpc-js';
import { notAnswered, type ExchangeOptions, type ExchangeResult } from './http-exchange.js';
import {
  GRPC_MESSAGE_MAX_BYTES,
  grpcStatusName,
  labChannelOptions,
  labContract,
  WORK_METHOD,
} from './grpc-contract.js';
import { truncateText } from '../util/bounded-json.js';

/** A status message (a peer's text) is kept to this many characters. */
export const GRPC_DETAILS_KEEP_CHARS = 512;
/** Channel state changes recorded per call: more is a flapping channel, counted, not kept. */
export const GRPC_STATES_KEPT = 16;
const UID_KEEP_CHARS = 128;

/** grpc-js's connectivity states by number (ConnectivityState). */
const stateNames = ['IDLE', 'CONNECTING', 'READY', 'TRANSIENT_FAILURE', 'SHUTDOWN'] as const;

/** What the gRPC layer showed of the Work RPC. */
export interface GrpcFacts {
  method: string;
  /** The call's status (null: none came, e.g. the runner aborted it). */
  code: number | null;
  codeName: string | null;
  /** The status message, cut to GRPC_DETAILS_KEEP_CHARS. */
  details: string | null;
  /**
   * The status came with trailing metadata: the server's own status (the lab server puts
   * x-pod-uid in every one). A status grpc-js makes itself (a lost connection, no connection, a
   * deadline) carries none.
   */
  statusFromServer: boolean;
  /** The server's initial metadata arrived, and when (ms after the call started); its x-pod-uid. */
  headersAfterMs: number | null;
  headerUid: string | null;
  /** The channel's connectivity states while the call was open, with ms after the call started. */
  channelStates: Array<{ state: string; afterMs: number }>;
  /** State changes beyond GRPC_STATES_KEPT, not kept. */
  channelStatesDropped: number;
  /** The channel was READY at some moment of the call (a connection could carry it). */
  readyDuringCall: boolean;
  /** The channel left READY while the call was open (ms after the call started), or null. */
  leftReadyAfterMs: number | null;
  /** The call's TCP connection as channelz saw it once READY (null: never READY, or not found). */
  connection: { localPort: number | null; remotePort: number | null } | null;
}

export interface GrpcExchangeResult extends ExchangeResult {
  grpc: GrpcFacts;
  /** The Work reply as received (a bounded protobuf message), or null. */
  reply: Record<string, unknown> | null;
}

export interface GrpcExchangeOptions extends ExchangeOptions {
  /** The call's channel changed state (e.g. READY → IDLE under the call). */
  onChannelState?: (state: string, afterMs: number) => void;
}

/**
 * A unary call other than the lab's Work RPC (the user's own service, ./grpc-target.ts): its
 * path, its codecs and its request message.
 */
export interface GrpcCall {
  method: string;
  serialize: (value: unknown) => Buffer;
  deserialize: (bytes: Buffer) => Record<string, unknown>;
  message: Record<string, unknown>;
}

/** How often, and how many times, channelz is read for the request message having been sent. */
const SENT_POLL_MS = 5;
const SENT_POLLS = 400;
/** Initial metadata values kept as headers (for --uid-from header:NAME): each cut to this. */
const METADATA_VALUE_KEEP_CHARS = 256;

/**
 * One Work RPC to `url`'s host and port (`{ms, id}` from the work template's values). The
 * call's deadline is the connect and response limits together: grpc-js waits for a connection
 * within the call's own deadline.
 */
export function grpcExchange(
  url: URL,
  work: { ms: number; id: string },
  options: GrpcExchangeOptions,
  own?: GrpcCall,
): Promise<GrpcExchangeResult> {
  return new Promise((resolve) => {
    const contract = labContract();
    const call: GrpcCall = own ?? {
      method: WORK_METHOD,
      serialize: (value) => Buffer.from(contract.lab.Work!.requestSerialize(value)),
      deserialize: (bytes) => contract.lab.Work!.responseDeserialize(bytes) as Record<string, unknown>,
      message: work,
    };
    const facts: GrpcFacts = {
      method: call.method,
      code: null,
      codeName: null,
      details: null,
      statusFromServer: false,
      headersAfterMs: null,
      headerUid: null,
      channelStates: [],
      channelStatesDropped: 0,
      readyDuringCall: false,
      leftReadyAfterMs: null,
      connection: null,
    };
    const result: GrpcExchangeResult = {
      ...notAnswered(),
      grpc: facts,
      reply: null,
    };
    const Lab = grpc.makeGenericClientConstructor(contract.lab, 'Lab');
    const host = url.hostname.includes(':') ? `[${url.hostname.replace(/^\[|\]$/g, '')}]` : url.hostname;
    // A subchannel pool of its own: grpc-js shares connections between channels to the same
    // target by default (its global subchannel pool), and this call's connection must be its own.
    const client = new Lab(`${host}:${url.port || '80'}`, grpc.credentials.createInsecure(), {
      ...labChannelOptions,
      'grpc.use_local_subchannel_pool': 1,
    });
    const channel = client.getChannel();
    const started = performance.now();
    const since = () => Math.round(performance.now() - started);
    let settled = false;

    let state = channel.getConnectivityState(false);
    const onState = (next: grpc.connectivityState) => {
      const name = stateNames[next] ?? String(next);
      if (facts.channelStates.length < GRPC_STATES_KEPT)
        facts.channelStates.push({ state: name, afterMs: since() });
      else facts.channelStatesDropped += 1;
      if (next === grpc.connectivityState.READY) {
        facts.readyDuringCall = true;
        if (!result.connected) {
          result.connected = true;
          // grpc-js registers the transport with channelz right after announcing READY
          // (grpc-js/src/subchannel.ts, startConnectingInternal): read it on the next turn.
          setImmediate(() => {
            if (settled) return;
            const c = connectionOf(channel);
            facts.connection = c ? { localPort: c.localPort, remotePort: c.remotePort } : null;
            result.localPort = facts.connection?.localPort ?? null;
            options.onConnect?.(result.localPort ?? 0);
            awaitSent(0);
          });
        }
      } else if (state === grpc.connectivityState.READY && facts.leftReadyAfterMs === null) {
        facts.leftReadyAfterMs = since();
      }
      options.onChannelState?.(name, since());
      state = next;
    };
    // The request message handed to the connection: grpc-js counts it in the transport's channelz
    // data (messages_sent, grpc-js/src/transport.ts) — the moment the work is written, which your
    // own service's graded acceptance waits on (the lab's has /state and the journal).
    let sentSeen = false;
    const awaitSent = (polls: number) => {
      if (settled || sentSeen || !own || !options.onWritten) return;
      if ((connectionOf(channel)?.messagesSent ?? 0) >= 1) {
        sentSeen = true;
        options.onWritten(null);
        return;
      }
      if (polls < SENT_POLLS) setTimeout(() => awaitSent(polls + 1), SENT_POLL_MS);
    };
    const deadline = Date.now() + options.connectTimeoutMs + options.responseTimeoutMs;
    const watch = () => {
      if (settled || state === grpc.connectivityState.SHUTDOWN) return;
      channel.watchConnectivityState(state, deadline, (error) => {
        if (error || settled) return;
        onState(channel.getConnectivityState(false));
        watch();
      });
    };
    watch();

    const finish = () => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      // The channel is this exchange's alone: it goes with it (after the watchers are done).
      setImmediate(() => client.close());
      resolve(result);
    };
    const rpc = client.makeUnaryRequest<unknown, Record<string, unknown>>(
      call.method,
      call.serialize,
      call.deserialize,
      call.message,
      new grpc.Metadata(),
      { deadline },
      // A unary call's reply comes to this callback (grpc-js emits no 'data' for it), before 'status'.
      (error, reply) => {
        if (!error && reply) result.reply = reply;
      },
    );
    const onAbort = () => {
      result.error ??= { code: 'ABORT_ERR', message: 'aborted by the runner' };
      rpc.cancel();
      finish();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    rpc.on('metadata', (metadata: grpc.Metadata) => {
      facts.headersAfterMs = since();
      facts.headerUid = uidIn(metadata);
      result.headers = headersOf(metadata);
      options.onResponse?.(200);
    });
    rpc.on('status', (status: grpc.StatusObject) => {
      // A status may land in the same turn as the channel's own change: read the state once more.
      const now = channel.getConnectivityState(false);
      if (now !== state) onState(now);
      facts.code = status.code;
      facts.codeName = grpcStatusName(status.code);
      facts.details = truncateText(String(status.details ?? ''), GRPC_DETAILS_KEEP_CHARS);
      facts.statusFromServer = Object.keys(status.metadata.getMap()).length > 0;
      if (status.code === grpc.status.OK && result.reply !== null) {
        result.responseComplete = true;
        const text = JSON.stringify(result.reply);
        result.body = text;
        result.bytesReceived = Math.min(Buffer.byteLength(text), GRPC_MESSAGE_MAX_BYTES);
      } else {
        result.error ??= { code: facts.codeName, message: facts.details };
        if (status.code === grpc.status.DEADLINE_EXCEEDED && !facts.statusFromServer)
          result.timedOut = facts.readyDuringCall ? 'response' : 'connect';
      }
      finish();
    });
    // The call's 'error' is its non-OK status again: read at 'status'.
    rpc.on('error', () => undefined);
  });
}

/** Initial metadata's text values as headers (bounded by the channel's max_metadata_size, and cut). */
function headersOf(metadata: grpc.Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap()))
    if (typeof value === 'string') out[key] = truncateText(value, METADATA_VALUE_KEEP_CHARS);
  return out;
}

function uidIn(metadata: grpc.Metadata): string | null {
  const value = metadata.get('x-pod-uid')[0];
  return typeof value === 'string' ? truncateText(value, UID_KEEP_CHARS) : null;
}

interface Ref {
  channel_id?: string | number;
  subchannel_id?: string | number;
  socket_id?: string | number;
}
type Handler = (
  call: { request: Record<string, unknown> },
  callback: (error: unknown, value?: unknown) => void,
) => void;

/**
 * The ports of the channel's READY connection, from grpc-js's channelz handlers (gRFC A14: the
 * same data a channelz client reads; called in-process, synchronously). Null when not found.
 */
export function connectionOf(
  channel: grpc.ChannelInterface,
): (NonNullable<GrpcFacts['connection']> & { messagesSent?: number }) | null {
  const handlers = grpc.getChannelzHandlers() as unknown as Record<string, Handler>;
  const ask = (name: string, request: Record<string, unknown>): Record<string, unknown> | null => {
    let out: Record<string, unknown> | null = null;
    handlers[name]?.({ request }, (error, value) => {
      if (!error && value && typeof value === 'object') out = value as Record<string, unknown>;
    });
    return out;
  };
  const ref = channel.getChannelzRef() as { id: number };
  const top = ask('GetChannel', { channel_id: String(ref.id) })?.channel as
    { subchannel_ref?: Ref[] } | undefined;
  for (const sub of (top?.subchannel_ref ?? []).slice(0, 8)) {
    const subchannel = ask('GetSubchannel', { subchannel_id: String(sub.subchannel_id) })?.subchannel as
      { socket_ref?: Ref[] } | undefined;
    const socketRef = subchannel?.socket_ref?.[0];
    if (!socketRef) continue;
    const socket = ask('GetSocket', { socket_id: String(socketRef.socket_id) })?.socket as
      | {
          local?: { tcpip_address?: { port?: number } };
          remote?: { tcpip_address?: { port?: number } };
          data?: { messages_sent?: number | string };
        }
      | undefined;
    if (!socket) continue;
    return {
      localPort: socket.local?.tcpip_address?.port ?? null,
      remotePort: socket.remote?.tcpip_address?.port ?? null,
      messagesSent: Number(socket.data?.messages_sent ?? 0),
    };
  }
  return null;
}
