// The lab's WebSocket contract (`--protocol ws`, docs/LAB-CONTRACT.md), shared by the server
// (src/server/ws-side.ts), the run's client (./ws-exchange.ts) and the tests: the path, the
// messages and their limits, and the close codes by name (RFC 6455 §7.4.1).
import { parseJsonBounded } from '../util/bounded-json.js';

/** The path a WebSocket Upgrade is taken on; anything else is answered 404. */
export const WS_PATH = '/ws';

/**
 * The largest frame either side takes (the `ws` package's `maxPayload`; its default is 100 MiB). A
 * work message is under 200 bytes: a peer's frame above this fails the connection with 1009
 * ("message too big", RFC 6455 §7.4.1) as soon as its header is read, before any byte of it is kept.
 */
export const WS_MAX_PAYLOAD_BYTES = 64 * 1024;

/**
 * Messages a side takes that are not the contract's (not JSON, not a known type) before it fails
 * the connection with 1008 (policy violation): a peer that sends a stream of garbage is ended
 * after this many, not read forever.
 */
export const WS_INVALID_MESSAGES_MAX = 64;

/** Work messages one socket may have in progress at once on the server (more: an error message). */
export const WS_WORK_PER_SOCKET_MAX = 1024;

/** A close reason (a peer's text, at most 123 bytes by RFC 6455 §5.5) is kept to this many characters. */
export const WS_REASON_KEEP_CHARS = 128;

/** The close code of the drain: "going away", a server going down (RFC 6455 §7.4.1). */
export const WS_GOING_AWAY = 1001;
/** No close frame came: the connection ended without one (RFC 6455 §7.4.1: never sent on the wire). */
export const WS_ABNORMAL_CLOSURE = 1006;

/** Close codes by number (RFC 6455 §7.4.1; 1012–1014 from the IANA registry); others by range. */
const closeNames: Record<number, string> = {
  1000: 'normal closure',
  1001: 'going away',
  1002: 'protocol error',
  1003: 'unsupported data',
  1005: 'no status received',
  1006: 'abnormal closure',
  1007: 'invalid frame payload data',
  1008: 'policy violation',
  1009: 'message too big',
  1010: 'mandatory extension',
  1011: 'internal error',
  1012: 'service restart',
  1013: 'try again later',
  1014: 'bad gateway',
  1015: 'TLS handshake',
};

/** A close code's name (RFC 6455 §7.4); an unregistered one by its range (§7.4.2). */
export function wsCloseName(code: number): string {
  const named = closeNames[code];
  if (named) return named;
  if (code >= 3000 && code <= 3999) return 'registered by libraries (3000–3999)';
  if (code >= 4000 && code <= 4999) return 'private use (4000–4999)';
  return 'not a defined close code';
}

/** The client's work message. */
export interface WsWorkMessage {
  type: 'work';
  id: string;
  ms: number;
}

/** What the server sends: acceptance and completion carry the Pod UID; an error says why. */
export type WsServerMessage =
  | { type: 'accepted'; id: string; podUid: string | null }
  | {
      type: 'done';
      id: string;
      podUid: string | null;
      name?: string | null;
      acceptedAt?: string;
      finishedAt?: string;
      durationMs?: number;
    }
  | { type: 'error'; id: string | null; error: { code: string; message: string } };

/** The depth a contract message may have (an error message is three levels). */
const MESSAGE_MAX_DEPTH = 4;

/**
 * A text message as the contract's JSON object, or null when it is not one (not JSON, too large or
 * too deep, not an object with a string `type`). Bounded: a message is at most WS_MAX_PAYLOAD_BYTES.
 */
export function parseWsMessage(text: string): ({ type: string } & Record<string, unknown>) | null {
  const parsed = parseJsonBounded(text, { maxChars: WS_MAX_PAYLOAD_BYTES, maxDepth: MESSAGE_MAX_DEPTH });
  if (!parsed.ok) return null;
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return null;
  return value as { type: string } & Record<string, unknown>;
}
