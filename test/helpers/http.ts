// Small real-HTTP helpers for tests: every request on a fresh connection unless an agent
// is given, with a bounded timeout, and errors kept with their code.
import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export function get(
  host: string,
  port: number,
  path: string,
  options: { agent?: http.Agent; timeoutMs?: number; method?: string } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host, port, path, method: options.method ?? 'GET', agent: options.agent ?? false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json: <T>() => JSON.parse(body) as T,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`request ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Resolves with the error a request ends in (rejects if it unexpectedly succeeds). */
export async function expectError(promise: Promise<unknown>): Promise<NodeJS.ErrnoException> {
  try {
    await promise;
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  throw new Error('expected the request to fail, but it succeeded');
}
