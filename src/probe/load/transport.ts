// What the load generator (./generator.ts) asks of a transport: carry one request at a time per
// call, and say once how it ended. The generator owns the schedule, the queue, the retry policy,
// stop and abandon, and the records' classes; a transport owns its connections — HTTP/1.1's pool
// of keep-alive connections (./http1-pool.ts) or HTTP/2's few long-lived sessions with a stream
// per request (./h2-sessions.ts) — their deadlines, and the resends its real client does on its
// own (Go's Transport on a reused HTTP/1.1 connection; a stream refused by GOAWAY for HTTP/2).
import type { ClassifiedResult } from '../outcome.js';
import type { LoadRecord } from './record.js';
import type { RequestOutcome } from '../client-events.js';

/**
 * The protocols the load speaks: HTTP/1.1, HTTP/2 over cleartext with prior knowledge, gRPC
 * (a unary Work RPC per request on grpc-js client channels, ./grpc-channels.ts), or WebSocket (a
 * work message per request on long-lived sockets of the ws package's client, ./ws-sockets.ts).
 */
export const loadProtocols = ['http1', 'h2c', 'grpc', 'ws'] as const;
export type LoadProtocol = (typeof loadProtocols)[number];

/**
 * HTTP/2: streams in flight per session at most (RFC 9113 §6.5.2: a server's limit should be no
 * smaller than 100); more requests wait in the generator's queue, their wait in their latency.
 */
export const H2_STREAMS_PER_SESSION = 100;

/** How a request ended, as the generator classifies it (../outcome.ts classifyWork). */
export interface TransportEnd {
  /** What the client saw (with HTTP/2's facts for a stream, gRPC's for an RPC and its decoded reply). */
  result: ClassifiedResult;
  /** The runner abandoned it in flight (ABORT_ERR): sent, never answered within the run. */
  abandoned: boolean;
  /** Response bytes (head or body) arrived before it ended. */
  responseStarted: boolean;
  /**
   * The outcome when the transport knows it without an exchange to read: a request the HTTP/2
   * session refused itself (`request()` threw, nothing on the wire) after a GOAWAY or its loss.
   */
  outcome?: Extract<RequestOutcome, 'goaway-refused' | 'session-lost'>;
}

/** The generator's side: one call per request that ends. */
export interface TransportOwner {
  ended(record: LoadRecord, end: TransportEnd): void;
}

/** The figures a transport keeps for the load's result. */
export interface TransportFigures {
  /** Requests sent again after failing on a reused HTTP/1.1 connection before any byte (Go's Transport). */
  retried: number;
  /** Idle HTTP/1.1 connections closed after the idle timeout. */
  idleClosed: number;
  /** HTTP/2: requests the server refused (GOAWAY or REFUSED_STREAM: never processed) and sent again. */
  refusedResent: number;
  /** HTTP/2: sessions opened in all; gRPC: connections its channels made READY (null for HTTP/1.1). */
  sessions: number | null;
  /** HTTP/2: GOAWAY frames the sessions received (null for HTTP/1.1, and for gRPC: grpc-js does not show them). */
  goaways: number | null;
}

export interface LoadTransport {
  /** Requests it carries at once at most; more wait in the generator's queue. */
  readonly limit: number;
  /**
   * Sends the record's request. The transport sets `conn`, `reused`, `localPort`, `firstByteUs`
   * and `status` as they become known, then calls the owner's `ended` once.
   */
  send(record: LoadRecord): void;
  /** Checks deadlines and idle connections (the generator calls it every few ms while it runs). */
  sweep(now: number): void;
  /** Ends every request in flight as abandoned (the owner hears of each). */
  abandon(): void;
  /** Closes every connection (the end of the run: nothing is in flight). */
  close(): void;
  figures(): TransportFigures;
}

/** What every transport is built with. */
export interface TransportTarget {
  /** The server's base URL (http://host:port). */
  url: URL;
  host: string;
  port: number;
  /** HTTP/1.1: the Host header every request carries instead of the URL's (an ingress routes by it). */
  hostHeader?: string;
  bindLocalPort: boolean;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Integer µs since the records' origin (the generator's clock). */
  nowUs: () => number;
}

/** The request's path: /work?ms=…&id=…. */
export const workPath = (record: LoadRecord): string => `/work?ms=${record.workMs}&id=${record.id}`;
