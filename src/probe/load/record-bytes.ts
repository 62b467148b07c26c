// One record as the bytes of its JSON line, written straight into a Buffer: the same bytes as
// JSON.stringify(record) + '\n' (a test checks it), without building a string per record. The
// string path (record-file.ts recordLine, then UTF-8 encoding a 64 KB batch) cost most of the
// recording budget in garbage collection and String(number) (bench load-recording, profiled).
// Only plain values take this path: integers and strings of [\w.:-]; a record with anything
// else (a fraction, a string that needs escaping) returns -1 and goes the string way.
import type { LoadRecord } from './record.js';

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const K = {
  seq: ascii('{"seq":'),
  id: ascii(',"id":'),
  window: ascii(',"window":'),
  workMs: ascii(',"workMs":'),
  intendedUs: ascii(',"intendedUs":'),
  sentUs: ascii(',"sentUs":'),
  firstByteUs: ascii(',"firstByteUs":'),
  endUs: ascii(',"endUs":'),
  bytes: ascii(',"bytes":'),
  status: ascii(',"status":'),
  outcome: ascii(',"outcome":'),
  failure: ascii(',"failure":'),
  errorCode: ascii(',"errorCode":'),
  conn: ascii(',"conn":'),
  reused: ascii(',"reused":'),
  localPort: ascii(',"localPort":'),
  podUid: ascii(',"podUid":'),
  method: ascii(',"method":'),
  attempt: ascii(',"attempt":'),
  retried: ascii(',"retried":'),
  slot: ascii(',"slot":'),
  refused: ascii(',"refused":'),
  reconnectWaitMs: ascii(',"reconnectWaitMs":'),
  fate: ascii(',"fate":'),
  podUidFrom: ascii(',"podUidFrom":'),
  null: ascii('null'),
  true: ascii('true'),
  false: ascii('false'),
};

/** The most bytes a plain record can take: fixed text, 8 integers, 8 strings of at most this many. */
const STRING_MAX = 128;
export const RECORD_BYTES_MAX = 520 + 9 * (STRING_MAX + 2) + 13 * 17;

function put(b: Uint8Array, p: number, k: Uint8Array): number {
  for (let i = 0; i < k.length; i++) b[p + i] = k[i]!;
  return p + k.length;
}

/** A safe integer's digits (or null); -1 when it is not one. */
function int(b: Uint8Array, p: number, x: number | null): number {
  if (x === null) return put(b, p, K.null);
  if (!Number.isSafeInteger(x)) return -1;
  if (x < 0) {
    b[p++] = 45; // '-'
    x = -x;
  }
  if (x >= 1e9) {
    // Beyond int32: the part above 10^9 first, then the nine digits below (zero-padded).
    const high = Math.floor(x / 1e9);
    p = small(b, p, high);
    let low = x - high * 1e9;
    for (let k = p + 8; k >= p; k--) {
      const q = (low / 10) | 0;
      b[k] = 48 + low - q * 10;
      low = q;
    }
    return p + 9;
  }
  return small(b, p, x);
}

/** The digits of 0 <= x < 10^9 with int32 arithmetic. */
function small(b: Uint8Array, p: number, x: number): number {
  const len =
    x < 10
      ? 1
      : x < 100
        ? 2
        : x < 1e3
          ? 3
          : x < 1e4
            ? 4
            : x < 1e5
              ? 5
              : x < 1e6
                ? 6
                : x < 1e7
                  ? 7
                  : x < 1e8
                    ? 8
                    : 9;
  let n = x | 0;
  for (let k = p + len - 1; k >= p; k--) {
    const q = (n / 10) | 0;
    b[k] = 48 + n - q * 10;
    n = q;
  }
  return p + len;
}

/** A quoted string of [\w.:-] (or null); -1 when it needs escaping or is too long. */
function str(b: Uint8Array, p: number, s: string | null): number {
  if (s === null) return put(b, p, K.null);
  if (s.length > STRING_MAX) return -1;
  b[p++] = 34; // '"'
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // [0-9] [A-Z] [a-z] _ . : -
    if (
      (c >= 48 && c <= 58) || // 0-9 and ':'
      (c >= 65 && c <= 90) ||
      (c >= 97 && c <= 122) ||
      c === 95 ||
      c === 46 ||
      c === 45
    )
      b[p++] = c;
    else return -1;
  }
  b[p++] = 34;
  return p;
}

/**
 * Writes `r` as its JSON line and a newline into `b` from `p` (room for RECORD_BYTES_MAX
 * needed); returns the end, or -1 if the record is not plain (nothing meaningful was written).
 */
export function writeRecordBytes(b: Uint8Array, p: number, r: LoadRecord): number {
  p = put(b, p, K.seq);
  if ((p = int(b, p, r.seq)) < 0) return -1;
  p = put(b, p, K.id);
  if ((p = str(b, p, r.id)) < 0) return -1;
  p = put(b, p, K.window);
  if ((p = str(b, p, r.window)) < 0) return -1;
  p = put(b, p, K.workMs);
  if ((p = int(b, p, r.workMs)) < 0) return -1;
  p = put(b, p, K.intendedUs);
  if ((p = int(b, p, r.intendedUs)) < 0) return -1;
  p = put(b, p, K.sentUs);
  if ((p = int(b, p, r.sentUs)) < 0) return -1;
  p = put(b, p, K.firstByteUs);
  if ((p = int(b, p, r.firstByteUs)) < 0) return -1;
  p = put(b, p, K.endUs);
  if ((p = int(b, p, r.endUs)) < 0) return -1;
  p = put(b, p, K.bytes);
  if ((p = int(b, p, r.bytes)) < 0) return -1;
  p = put(b, p, K.status);
  if ((p = int(b, p, r.status)) < 0) return -1;
  p = put(b, p, K.outcome);
  if ((p = str(b, p, r.outcome)) < 0) return -1;
  p = put(b, p, K.failure);
  if ((p = str(b, p, r.failure)) < 0) return -1;
  p = put(b, p, K.errorCode);
  if ((p = str(b, p, r.errorCode)) < 0) return -1;
  p = put(b, p, K.conn);
  if ((p = int(b, p, r.conn)) < 0) return -1;
  p = put(b, p, K.reused);
  if (typeof r.reused !== 'boolean') return -1;
  p = put(b, p, r.reused ? K.true : K.false);
  p = put(b, p, K.localPort);
  if ((p = int(b, p, r.localPort)) < 0) return -1;
  p = put(b, p, K.podUid);
  if ((p = str(b, p, r.podUid)) < 0) return -1;
  if (r.method !== undefined) {
    p = put(b, p, K.method);
    if ((p = str(b, p, r.method)) < 0) return -1;
  }
  if (r.attempt !== undefined) {
    p = put(b, p, K.attempt);
    if ((p = int(b, p, r.attempt)) < 0) return -1;
  }
  if (r.retried !== undefined) {
    if (r.retried !== true) return -1;
    p = put(b, p, K.retried);
    p = put(b, p, K.true);
  }
  if (r.slot !== undefined) {
    p = put(b, p, K.slot);
    if ((p = int(b, p, r.slot)) < 0) return -1;
  }
  if (r.refused !== undefined) {
    p = put(b, p, K.refused);
    if ((p = int(b, p, r.refused)) < 0) return -1;
  }
  if (r.reconnectWaitMs !== undefined) {
    p = put(b, p, K.reconnectWaitMs);
    if ((p = int(b, p, r.reconnectWaitMs)) < 0) return -1;
  }
  if (r.fate !== undefined) {
    p = put(b, p, K.fate);
    if ((p = str(b, p, r.fate)) < 0) return -1;
  }
  if (r.podUidFrom !== undefined) {
    p = put(b, p, K.podUidFrom);
    if ((p = str(b, p, r.podUidFrom)) < 0) return -1;
  }
  b[p++] = 125; // '}'
  b[p++] = 10; // '\n'
  return p;
}
