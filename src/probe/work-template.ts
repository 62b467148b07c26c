// The target a run checks: the lab server's contract by default, or the user's own service —
// its health path, the work request it is sent (a template with {ms} and {id}), what status
// counts as finished and where its Pod UID is (if anywhere). Parsed once from the flags; the
// client renders it per run. docs/YOUR-SERVICE.md says what each part is for.
import { DraincheckError, quote } from '../errors.js';
import { parseJsonBounded } from '../util/bounded-json.js';

/** Where a response carries the Pod UID: a header, or a dot path into a JSON body. */
export type UidFrom = { kind: 'header'; name: string } | { kind: 'json'; path: string[] };

export interface TargetPlan {
  /** The lab contract (docs/LAB-CONTRACT.md): /state is polled, the completion body is checked. */
  lab: boolean;
  healthPath: string;
  work: { method: string; path: string; headers: Array<[string, string]>; body: string | null };
  /** e.g. `2xx`, `200,204`: what counts as the request finishing. */
  expectStatus: string;
  uidFrom: UidFrom | null;
  /**
   * --protocol grpc with the user's own service: the unary RPC the work is (absent or null: the
   * lab's Work RPC, or an HTTP request). `work` then says the same call as it goes on the wire:
   * POST of the method's path (gRPC over HTTP/2, PROTOCOL-HTTP2.md).
   */
  grpc?: GrpcWork | null;
  /**
   * --protocol ws with the user's own service: the socket's path, the work message and what
   * message means done (absent or null: the lab's work messages, or an HTTP request).
   */
  ws?: WsWork | null;
}

/** A work message on the user's own WebSocket (`--ws-path`, `--ws-message`, `--ws-done`). */
export interface WsWork {
  /** The path the socket is opened on (the Upgrade GET). */
  path: string;
  /** The work message's text, {ms} and {id} filled in per run. */
  message: string;
  /** A regular expression (with {id}) a server message matches when the work is done; null: any message. */
  done: string | null;
}

/** `--ws-message` text is held and sent whole: bounded. */
export const WS_MESSAGE_MAX_CHARS = 16 * 1024;

/** A unary RPC of the user's own service (`--grpc-method`, `--grpc-proto`, `--grpc-request`). */
export interface GrpcWork {
  /** `/package.Service/Method`, the call's :path. */
  method: string;
  /** The .proto file that defines it, as an absolute path (the client loads it). */
  protoFile: string;
  /** The request message as JSON text, {ms} (a number) and {id} (inside a string) filled in per run. */
  request: string;
  /**
   * --platform kube: the file's definitions (its imports included) as protobufjs JSON, what the
   * client Pod loads instead of a file it cannot read (./grpc-target.ts grpcDescriptor); absent:
   * loaded from protoFile. Never recorded in the run document (the file's path is).
   */
  descriptor?: string;
}

/**
 * The environment variable a client Pod gets GrpcWork.descriptor in (`draincheck client`): an
 * argument would do as well, but this keeps the Pod's args readable.
 */
export const GRPC_DESCRIPTOR_ENV = 'DRAINCHECK_GRPC_DESCRIPTOR';

/** `--grpc-request` text is held and parsed whole: bounded. */
export const GRPC_REQUEST_MAX_CHARS = 16 * 1024;
const GRPC_REQUEST_MAX_DEPTH = 32;

export const labWork = { method: 'GET', path: '/work?ms={ms}&id={id}', headers: [], body: null };

export const labTarget: TargetPlan = {
  lab: true,
  healthPath: '/healthz',
  work: labWork,
  expectStatus: '2xx',
  uidFrom: null,
};

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(['ms', 'id']);

/**
 * A placeholder in JSON text: a name in braces. `{}` (an empty object) and `{"a":1}` are JSON,
 * not placeholders, which the text templates' pattern would take them for.
 */
const JSON_PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Refuses a placeholder other than {ms} and {id}, naming the flag and the value. */
export function checkPlaceholders(flag: string, text: string, pattern = PLACEHOLDER): void {
  for (const m of text.matchAll(pattern)) {
    if (!KNOWN.has(m[1]!))
      throw new DraincheckError(
        'DC_USAGE',
        `${flag}: unknown placeholder {${m[1]!}} in ${quote(text)}; use {ms} and {id}`,
      );
  }
}

/** `--work 'METHOD /path?x={ms}'` → method and path template. */
export function parseWork(text: string): { method: string; path: string } {
  const m = /^\s*([A-Za-z]+)\s+(\/\S*)\s*$/.exec(text);
  if (!m)
    throw new DraincheckError(
      'DC_USAGE',
      `--work must be "METHOD /path", e.g. 'GET /slow?ms={ms}&id={id}', got ${quote(text)}`,
    );
  checkPlaceholders('--work', m[2]!);
  return { method: m[1]!.toUpperCase(), path: m[2]! };
}

/** `--header 'Name: value'`. */
export function parseHeader(text: string): [string, string] {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(text);
  if (!m) throw new DraincheckError('DC_USAGE', `--header must be "Name: value", got ${quote(text)}`);
  checkPlaceholders('--header', m[2]!);
  return [m[1]!, m[2]!];
}

/** `--expect-status 2xx`, `200`, `200,204`, `2xx,304`. */
export function parseExpectStatus(text: string): string {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || !parts.every((p) => /^[1-5](\d\d|xx)$/.test(p)))
    throw new DraincheckError(
      'DC_USAGE',
      `--expect-status must be codes or classes like 200 or 2xx, comma-separated, got ${quote(text)}`,
    );
  return parts.join(',');
}

export function statusExpected(spec: string, status: number): boolean {
  return spec
    .split(',')
    .some((p) => (p.endsWith('xx') ? Math.floor(status / 100) === Number(p[0]) : Number(p) === status));
}

/** `--uid-from header:NAME` or `json:PATH` (dots between keys). */
export function parseUidFrom(text: string): UidFrom {
  const m = /^(header|json):(.+)$/.exec(text.trim());
  if (m?.[1] === 'header' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(m[2]!))
    return { kind: 'header', name: m[2]!.toLowerCase() };
  if (m?.[1] === 'json' && m[2]!.split('.').every((k) => k !== ''))
    return { kind: 'json', path: m[2]!.split('.') };
  throw new DraincheckError(
    'DC_USAGE',
    `--uid-from must be header:NAME or json:PATH (e.g. json:pod.uid), got ${quote(text)}`,
  );
}

/** `--grpc-method package.Service/Method` (a leading / allowed) → `/package.Service/Method`. */
export function parseGrpcMethod(text: string): string {
  const m = /^\/?((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(
    text.trim(),
  );
  if (!m)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-method must be package.Service/Method, e.g. shop.v1.Orders/Place, got ${quote(text)}`,
    );
  return `/${m[1]!}/${m[2]!}`;
}

/**
 * `--grpc-request '{"ms":{ms},"id":"{id}"}'`: JSON with the work's placeholders — {ms} where a
 * number goes, {id} inside a string. Checked now with sample values: bounded, and a JSON object.
 */
export function parseGrpcRequest(text: string): string {
  if (text.length > GRPC_REQUEST_MAX_CHARS)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-request is longer than ${GRPC_REQUEST_MAX_CHARS} characters (${text.length})`,
    );
  checkPlaceholders('--grpc-request', text, JSON_PLACEHOLDER);
  const parsed = parseJsonBounded(renderJson(text, { ms: 0, id: 'work-0' }), {
    maxChars: GRPC_REQUEST_MAX_CHARS * 2,
    maxDepth: GRPC_REQUEST_MAX_DEPTH,
  });
  if (!parsed.ok)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-request is not JSON once {ms} and {id} are filled in (${parsed.reason}), got ${quote(text)}`,
    );
  if (!parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value))
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-request must be a JSON object (the request message), got ${quote(text)}`,
    );
  return text;
}

/** The JSON template with {ms} as a number and {id} escaped for a JSON string. */
export function renderJson(template: string, values: { ms: number; id: string }): string {
  return template.replace(JSON_PLACEHOLDER, (_, name: string) =>
    name === 'ms' ? String(values.ms) : JSON.stringify(values.id).slice(1, -1),
  );
}

/** A pattern with {id} for one work id: {id} is the id, matched literally. */
export function idPattern(pattern: string, workId: string): RegExp {
  const escaped = workId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(pattern.replace(/\{id\}/g, escaped));
}

/** The template with {ms} and {id} filled in; `encode` for a URL path. */
export function render(template: string, values: { ms: number; id: string }, encode: boolean): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const v = name === 'ms' ? String(values.ms) : values.id;
    return encode ? encodeURIComponent(v) : v;
  });
}

const UID_KEEP_CHARS = 128;

/** The Pod UID a response carries where `uidFrom` says (lab: the body's `uid`), or null. */
export function uidIn(
  uidFrom: UidFrom | null,
  body: unknown,
  headers: Record<string, string | string[] | undefined> | null,
): string | null {
  let v: unknown;
  if (uidFrom?.kind === 'header') {
    const h = headers?.[uidFrom.name];
    v = Array.isArray(h) ? h[0] : h;
  } else {
    v = body;
    for (const key of uidFrom?.kind === 'json' ? uidFrom.path : ['uid']) {
      v = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
    }
  }
  // A Pod UID is 36 characters; a longer one is kept cut, and matches no Pod.
  return typeof v === 'string' && v !== '' ? v.slice(0, UID_KEEP_CHARS) : null;
}
