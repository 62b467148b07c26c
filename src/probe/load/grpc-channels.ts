// The gRPC transport of the load generator (./transport.ts, `--protocol grpc`): every request is
// one unary `draincheck.lab.v1.Lab/Work` RPC on one of `connections` grpc-js client channels —
// @grpc/grpc-js's own client, the one Node users run, with its own reconnects and transparent
// retry, not an imitation. Why few channels: a gRPC client holds a channel per target for its
// life, and a channel with one address (a Service's ClusterIP) keeps one TCP connection
// (pick_first), so a Kubernetes Service, which balances connections, pins each channel to one
// Pod until the server ends the connection (GOAWAY: tryShutdown, max-connection-age) or loses it
// (issue 26). Each channel has a subchannel pool of its own (`grpc.use_local_subchannel_pool`):
// grpc-js otherwise shares one connection between channels to the same target, and N channels
// stand for N clients (processes, Pods) with a connection each.
//
// A request goes to the channel whose turn it is (each stands for a client with its own share),
// or, if that one is connected, to the connected channel with the fewest RPCs in flight. The
// channel's connectivity states are followed (watchConnectivityState calls back synchronously on
// each change): each READY is one connection (`conn`, numbered across channels; its ports read
// from grpc-js's channelz, gRFC A14), and an RPC is on the connection that was READY when its
// initial metadata came (the lab server sends it at acceptance). The RPC's end is read with the
// probe's own grpcOutcome (../outcome.ts) from the same facts `draincheck run --protocol grpc`
// keeps, because the status alone does not say what the server did (issue 26's traps): a
// server's forceShutdown is CANCELLED, a process exit UNAVAILABLE "Connection dropped", a call
// after either UNAVAILABLE from a reconnect that was refused, and a draining server's own status
// carries its trailers. grpc-js retries a stream refused by GOAWAY by itself (gRFC A6's
// transparent retry, grpc-js/src/retrying-call.ts) and does not tell its user: the load cannot count those.
import grpc from '@grpc/grpc-js';
import type { GrpcFacts } from '../grpc-exchange.js';
import { connectionOf } from '../grpc-exchange.js';
import {
  GRPC_MESSAGE_MAX_BYTES,
  grpcStatusName,
  labChannelOptions,
  labContract,
  WORK_METHOD,
} from '../grpc-contract.js';
import type { ClassifiedResult } from '../outcome.js';
import { truncateText } from '../../util/bounded-json.js';
import type { LoadRecord } from './record.js';
import {
  H2_STREAMS_PER_SESSION,
  type LoadTransport,
  type TransportFigures,
  type TransportOwner,
  type TransportTarget,
} from './transport.js';

/** A status message (a peer's text) kept per RPC. */
const DETAILS_KEEP_CHARS = 256;

/** A call's 'error' event is its non-OK status again, read at 'status': heard and dropped. */
const ignore = (): void => undefined;

export interface GrpcChannelsOptions {
  /** The client's channels, each with one connection at a time. */
  connections: number;
}

/** One client channel and the connection it is on. */
interface Channel {
  index: number;
  client: grpc.Client;
  state: grpc.connectivityState;
  /** Times it turned READY (a new connection each time). */
  readies: number;
  /** The connection now READY (its number), or null. */
  conn: number | null;
  localPort: number | null;
  /** RPCs the current connection carried. */
  carried: number;
  calls: Set<Call>;
}

interface Call {
  record: LoadRecord;
  channel: Channel;
  call: grpc.ClientUnaryCall | null;
  /** The channel was READY at the start, or turned READY during the call. */
  readyAtStart: boolean;
  readiesAtStart: number;
  metadataAt: number | null;
  reply: Record<string, unknown> | null;
  done: boolean;
}

export class GrpcChannels implements LoadTransport {
  readonly limit: number;
  private readonly channels: Channel[];
  /** The Work method's codecs: proto-loader's own, as the generated client (`client.Work`) calls them. */
  private readonly serialize: (value: unknown) => Buffer;
  private readonly deserialize: (bytes: Buffer) => Record<string, unknown>;
  /**
   * Every call's initial metadata (none of ours): grpc-js copies what it is given as the call
   * starts (ResolvingCall.start: `metadata.clone()`) and never changes the caller's, so one
   * empty Metadata serves every call instead of one made per RPC.
   */
  private readonly metadata = new grpc.Metadata();
  private readonly calls = new Set<Call>();
  private cursor = 0;
  private connSeq = 0;
  private closed = false;

  constructor(
    readonly target: TransportTarget,
    options: GrpcChannelsOptions,
    private readonly owner: TransportOwner,
  ) {
    const lab = labContract().lab;
    const work = lab.Work!;
    // protobufjs's encode().finish() is a Buffer already (its BufferWriter under Node): handed
    // to grpc-js as it is, as the generated client does, not copied into another per RPC.
    this.serialize = work.requestSerialize;
    this.deserialize = work.responseDeserialize as (bytes: Buffer) => Record<string, unknown>;
    const Lab = grpc.makeGenericClientConstructor(lab, 'Lab');
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    this.channels = Array.from({ length: options.connections }, (_, index) => {
      const client = new Lab(`${host}:${target.port}`, grpc.credentials.createInsecure(), {
        ...labChannelOptions,
        'grpc.use_local_subchannel_pool': 1,
      });
      const channel: Channel = {
        index,
        client,
        state: client.getChannel().getConnectivityState(false),
        readies: 0,
        conn: null,
        localPort: null,
        carried: 0,
        calls: new Set(),
      };
      this.watch(channel);
      return channel;
    });
    // grpc-js queues RPCs on a channel that is connecting; the server takes the streams it allows.
    this.limit = options.connections * H2_STREAMS_PER_SESSION;
  }

  send(record: LoadRecord): void {
    const channel = this.pick();
    const ready = channel.state === grpc.connectivityState.READY;
    const item: Call = {
      record,
      channel,
      call: null,
      readyAtStart: ready,
      readiesAtStart: channel.readies,
      metadataAt: null,
      reply: null,
      done: false,
    };
    record.slot = channel.index + 1;
    record.conn = ready ? channel.conn : null;
    record.reused = ready && channel.carried > 0;
    record.localPort = ready ? channel.localPort : null;
    record.status = null;
    record.firstByteUs = null;
    if (ready) channel.carried += 1;
    channel.calls.add(item);
    this.calls.add(item);
    const deadline = Date.now() + this.target.connectTimeoutMs + this.target.responseTimeoutMs;
    // grpc-js takes the caller's stack at every call (`new Error()` in makeUnaryRequest) for the
    // error its callback gets if the call fails; the load reads no such error (the status is read
    // at 'status'), and capturing the frames cost ~4 µs per RPC (~0.3 µs with none): none are
    // taken. The limit is back before anything else runs.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    let call: grpc.ClientUnaryCall;
    try {
      call = channel.client.makeUnaryRequest<{ ms: number; id: string }, Record<string, unknown>>(
        WORK_METHOD,
        this.serialize,
        this.deserialize,
        { ms: record.workMs, id: record.id },
        this.metadata,
        { deadline },
        // A unary call's reply comes to this callback, before 'status'.
        (error, reply) => {
          if (!error && reply) item.reply = reply;
        },
      );
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    item.call = call;
    call.on('metadata', () => {
      item.metadataAt = performance.now();
      record.firstByteUs = this.target.nowUs();
      // The server took it on the connection READY now (the first RPC of a connection is sent
      // while its channel turns READY, so the connection is named here, not at the send).
      if (channel.state === grpc.connectivityState.READY && record.conn !== channel.conn) {
        // Reused: the connection carried an RPC of ours before this one.
        record.reused = channel.carried > 0;
        channel.carried += 1;
        record.conn = channel.conn;
        record.localPort = channel.localPort;
      }
    });
    call.on('status', (status: grpc.StatusObject) => this.ended(item, status));
    call.on('error', ignore);
  }

  /** grpc-js keeps each RPC's deadline itself. */
  sweep(): void {}

  abandon(): void {
    for (const item of [...this.calls]) {
      this.end(
        item,
        this.result(item, null, { code: 'ABORT_ERR', message: 'abandoned by the runner' }),
        true,
      );
      item.call?.cancel();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const channel of this.channels) channel.client.close();
  }

  figures(): TransportFigures {
    // Connections: each READY of a channel. GOAWAY frames are grpc-js's own business (not shown).
    return { retried: 0, idleClosed: 0, refusedResent: 0, sessions: this.connSeq, goaways: null };
  }

  /**
   * The channel whose turn it is, unless it is READY: then the READY channel with the fewest RPCs
   * in flight. The channels stand for N clients, each with its own share: one without a
   * connection (connecting, or TRANSIENT_FAILURE after a refused reconnect, where grpc-js's
   * pick_first fails a call at once) takes exactly its turns — it has no RPCs in flight, and
   * picking the least-loaded channel poured the load onto it for its backoff (~1 s): with one of
   * 3 connections closed at once and 200 ms RPCs, 36 of 45 RPCs failed where 15 (its share) do
   * now (test/probe/load/grpc-load.test.ts) — the likely amplifier of a CI run's 17 rpc-refused
   * in a 2-replica rollout. The connected ones share the rest by their load, as a client's pool
   * that balances does: strictly in turn, the slowest connection set the pace (the gRPC load
   * bench fell from 0.92 to 0.79–0.85 of grpc-js's closed loop).
   */
  private pick(): Channel {
    const n = this.channels.length;
    const turn = this.channels[this.cursor]!;
    this.cursor = (this.cursor + 1) % n;
    if (turn.state !== grpc.connectivityState.READY) return turn;
    let best = turn;
    for (let k = 1; k < n; k++) {
      const c = this.channels[(turn.index + k) % n]!;
      if (c.state === grpc.connectivityState.READY && c.calls.size < best.calls.size) best = c;
    }
    return best;
  }

  /** Follows a channel's connectivity state: each READY is a new connection. */
  private watch(channel: Channel): void {
    if (this.closed || channel.state === grpc.connectivityState.SHUTDOWN) return;
    const ch = channel.client.getChannel();
    ch.watchConnectivityState(channel.state, Infinity, () => {
      const next = ch.getConnectivityState(false);
      if (next === grpc.connectivityState.READY && channel.state !== grpc.connectivityState.READY) {
        channel.readies += 1;
        channel.conn = ++this.connSeq;
        channel.carried = 0;
        channel.localPort = null;
        const conn = channel.conn;
        // grpc-js registers the transport with channelz right after announcing READY
        // (grpc-js/src/subchannel.ts): read its ports on the next turn.
        setImmediate(() => {
          if (channel.conn !== conn || this.closed) return;
          channel.localPort = connectionOf(ch)?.localPort ?? null;
          for (const item of channel.calls)
            if (item.record.conn === conn && item.record.localPort === null)
              item.record.localPort = channel.localPort;
        });
      } else if (next !== grpc.connectivityState.READY) {
        channel.conn = null;
      }
      channel.state = next;
      this.watch(channel);
    });
  }

  private ended(item: Call, status: grpc.StatusObject): void {
    if (item.done) return;
    const channel = item.channel;
    const facts: GrpcFacts = {
      method: WORK_METHOD,
      code: status.code,
      codeName: grpcStatusName(status.code),
      details: truncateText(String(status.details ?? ''), DETAILS_KEEP_CHARS),
      statusFromServer: Object.keys(status.metadata.getMap()).length > 0,
      headersAfterMs: item.metadataAt,
      headerUid: null,
      channelStates: [],
      channelStatesDropped: 0,
      readyDuringCall:
        item.readyAtStart ||
        channel.readies > item.readiesAtStart ||
        channel.state === grpc.connectivityState.READY ||
        item.metadataAt !== null,
      leftReadyAfterMs: null,
      connection: null,
    };
    const result = this.result(item, facts, null);
    if (status.code === grpc.status.OK && item.reply !== null) {
      result.responseComplete = true;
      const text = JSON.stringify(item.reply);
      result.body = text;
      // The decoded reply too: classifyWork reads it as it is rather than parse `text` back.
      result.labReply = item.reply;
      result.bytesReceived = Math.min(Buffer.byteLength(text), GRPC_MESSAGE_MAX_BYTES);
    } else {
      result.error = { code: facts.codeName, message: facts.details ?? '' };
      // grpc-js's own deadline (no trailers): the connect and response limits together.
      if (status.code === grpc.status.DEADLINE_EXCEEDED && !facts.statusFromServer)
        result.timedOut = facts.readyDuringCall ? 'response' : 'connect';
    }
    this.end(item, result, false);
  }

  private result(
    item: Call,
    facts: GrpcFacts | null,
    error: { code: string; message: string } | null,
  ): ClassifiedResult {
    const result: ClassifiedResult = {
      connected: item.record.conn !== null || (facts?.readyDuringCall ?? false),
      localPort: item.record.localPort,
      status: null,
      headers: null,
      body: null,
      bytesReceived: 0,
      responseComplete: false,
      error,
      timedOut: null,
      dnsFailed: false,
    };
    // Set, not spread in: a conditional spread costs microseconds per RPC in V8 (../outcome.ts outcomeOf).
    if (facts) result.grpc = facts;
    return result;
  }

  private end(item: Call, result: ClassifiedResult, abandoned: boolean): void {
    if (item.done) return;
    item.done = true;
    item.channel.calls.delete(item);
    this.calls.delete(item);
    this.owner.ended(item.record, {
      result,
      abandoned,
      responseStarted: item.metadataAt !== null,
    });
  }
}
