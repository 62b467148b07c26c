// The recorded API traffic in test/fixtures/kube-api (a copy of the shared recordings, byte
// for byte; see its README), and the ways to send it back: a body with its recorded
// headers, or a watch / log stream written one line per chunk.
import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';

export const fixturesDir = fileURLToPath(new URL('../../../../test/fixtures/kube-api/', import.meta.url));

export const scenarios = ['drain', 'exit-143', 'ignore-term', 'prestop-sleep'] as const;
export type Scenario = (typeof scenarios)[number];
export const runsOf = (s: Scenario): string[] => [s, `${s}-run2`, `${s}-run3`];

export function fixture(relative: string): Buffer {
  return readFileSync(fixturesDir + relative);
}

export function fixtureJson<T = Record<string, unknown>>(relative: string): T {
  return JSON.parse(fixture(relative).toString('utf8')) as T;
}

/** The lines of a recorded stream, each without its newline, bytes untouched. */
export function lines(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = body.indexOf(10); i >= 0; i = body.indexOf(10, start)) {
    out.push(body.subarray(start, i));
    start = i + 1;
  }
  if (start < body.length) out.push(body.subarray(start));
  return out;
}

export interface WatchLine {
  raw: Buffer;
  type: string;
  rv: number;
  object: Record<string, unknown> & { metadata: { resourceVersion: string; name: string } };
}

export function watchLines(relative: string): WatchLine[] {
  return lines(fixture(relative)).map((raw) => {
    const event = JSON.parse(raw.toString('utf8')) as { type: string; object: WatchLine['object'] };
    return { raw, type: event.type, rv: Number(event.object.metadata.resourceVersion), object: event.object };
  });
}

export interface RecordedRun {
  name: string;
  pods: WatchLine[];
  slices: WatchLine[];
  events: WatchLine[];
  podsListBefore: Buffer;
  slicesListBefore: Buffer;
  podDelete: Buffer;
  podGone: Buffer;
  /** `GET .../log?follow=true`, when that run recorded it. */
  log: Buffer | null;
}

export function recordedRun(name: string): RecordedRun {
  const logFile = `${name}/pod-log.follow.txt`;
  return {
    name,
    pods: watchLines(`${name}/pods.watch.jsonl`),
    slices: watchLines(`${name}/endpointslices.watch.jsonl`),
    events: watchLines(`${name}/events.watch.jsonl`),
    podsListBefore: fixture(`${name}/pods-list-before.json`),
    slicesListBefore: fixture(`${name}/endpointslices-list-before.json`),
    podDelete: fixture(`${name}/pod-delete.response.json`),
    podGone: fixture(`${name}/pod-get-after-delete.404.json`),
    log: existsSync(fixturesDir + logFile) ? fixture(logFile) : null,
  };
}

export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** An `errors/` recording: status and headers from `<name>.headers.txt`, and its body. */
export function recordedError(name: string): RecordedResponse {
  const [statusLine = '', ...headerLines] = fixture(`errors/${name}.headers.txt`)
    .toString('utf8')
    .split(/\r?\n/);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  const body = existsSync(`${fixturesDir}errors/${name}.json`)
    ? fixture(`errors/${name}.json`)
    : fixture(`errors/${name.replace(/\.\d{3}$/, '')}.jsonl`);
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

export function send(res: http.ServerResponse, response: RecordedResponse): void {
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length) });
  res.end(bytes);
}

export interface StreamOptions {
  headers?: Record<string, string>;
  /** After the lines: keep the stream open until the client leaves (a live watch), end it, or cut the connection. */
  then?: 'keep-open' | 'end' | 'cut';
  /** Bytes written after the lines and before a cut: half an event. */
  partial?: Buffer;
  /** Add a newline after each line (watch streams); a log stream's bytes are written as recorded. */
  newlines?: boolean;
}

/** Writes lines as chunks (no content-length: Transfer-Encoding: chunked). */
export async function stream(
  res: http.ServerResponse,
  chunks: Buffer[],
  options: StreamOptions = {},
): Promise<void> {
  res.writeHead(200, options.headers ?? { 'content-type': 'application/json' });
  res.flushHeaders();
  // Each write waits for the socket, so one line is one chunk and a cut never drops lines.
  const write = (bytes: Buffer) =>
    new Promise<void>((resolve) => {
      if (res.destroyed) return resolve();
      res.once('close', resolve);
      res.write(bytes, () => {
        res.off('close', resolve);
        resolve();
      });
    });
  for (const chunk of chunks)
    await write(options.newlines === false ? chunk : Buffer.concat([chunk, Buffer.from('\n')]));
  if (options.partial) await write(options.partial);
  const then = options.then ?? 'keep-open';
  if (then === 'end') res.end();
  else if (then === 'cut') res.socket?.destroy();
  else if (!res.destroyed) await new Promise((resolve) => res.once('close', resolve));
}
