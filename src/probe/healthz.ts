// One GET /healthz with a total deadline. node:http's `timeout` is an idle timeout: a server
// whose answer trickles a byte every 0.3 s never trips a 1 s one, and the wait never ends
// (issue 23.4b). Here the attempt is destroyed at its deadline or when the signal aborts,
// whatever the server sends.
import http from 'node:http';

/** 'ready' (200, whole body), `HTTP <status>`, or what went wrong (an error code, 'timed out'). */
export function getHealthz(
  target: URL,
  limitMs: number,
  signal: AbortSignal,
  /** Sent as the Host header (an ingress routing by host); default the URL's. */
  host?: string,
): Promise<string> {
  return new Promise<string>((resolve) => {
    if (signal.aborted) return resolve('interrupted');
    let answer = 'no answer';
    const options = { agent: false, ...(host !== undefined ? { headers: { host } } : {}) };
    const req = http.get(new URL('/healthz', target), options, (res) => {
      res.resume();
      res.on('end', () => finish(res.statusCode === 200 ? 'ready' : `HTTP ${res.statusCode ?? 0}`));
      res.on('error', (e) => finish(e.message));
    });
    const timer = setTimeout(() => {
      answer = `no whole answer within ${limitMs} ms`;
      req.destroy();
    }, limitMs);
    const onAbort = () => {
      answer = 'interrupted';
      req.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e) =>
      finish(answer !== 'no answer' ? answer : ((e as NodeJS.ErrnoException).code ?? e.message)),
    );
    req.on('close', () => finish(answer));
    function finish(result: string) {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    }
  });
}
