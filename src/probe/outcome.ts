// The work request's outcome, from what the client saw and nothing else. Each outcome is
// its own thing: a finished transfer is not a 200, a 500 is not a dropped connection, and a
// connect timeout says nothing about the app being killed.
import type { RequestOutcome } from './client-events.js';
import type { ExchangeResult } from './http-exchange.js';

export interface WorkOutcome {
  outcome: RequestOutcome;
  status: number | null;
  /** Parsed JSON body, or the raw text when it is not JSON; null without a whole response. */
  body: unknown;
  /** The UID inside a valid completion body. */
  bodyUid: string | null;
  error: { code: string | null; message: string } | null;
  bytesReceived: number;
  localPort: number | null;
  /** Why a 2xx response is not a completion (for `unexpected-response`). */
  problem: string | null;
}

export function classifyWork(result: ExchangeResult, workId: string): WorkOutcome {
  const base = {
    status: result.status,
    error: result.error,
    bytesReceived: result.bytesReceived,
    localPort: result.localPort,
  };
  if (!result.connected) {
    const outcome: RequestOutcome = result.dnsFailed
      ? 'dns-error'
      : result.timedOut === 'connect' || result.error?.code === 'ETIMEDOUT'
        ? 'connect-timeout'
        : 'connect-refused';
    return { ...base, outcome, body: null, bodyUid: null, problem: null };
  }
  if (!result.responseComplete) {
    const outcome: RequestOutcome =
      result.timedOut === 'response' ? 'response-timeout' : 'connection-dropped';
    return { ...base, outcome, body: null, bodyUid: null, problem: null };
  }
  const body = parseBody(result.body ?? '');
  const status = result.status ?? 0;
  if (status >= 400) return { ...base, outcome: 'http-error', body, bodyUid: uidOf(body), problem: null };
  if (status < 200 || status >= 300) {
    return { ...base, outcome: 'unexpected-response', body, bodyUid: null, problem: `status ${status}` };
  }
  const problem = completionProblem(body, workId);
  if (problem) return { ...base, outcome: 'unexpected-response', body, bodyUid: null, problem };
  return { ...base, outcome: 'completed', body, bodyUid: uidOf(body), problem: null };
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    if (e instanceof SyntaxError) return text;
    throw e;
  }
}

function uidOf(body: unknown): string | null {
  if (body && typeof body === 'object' && typeof (body as { uid?: unknown }).uid === 'string') {
    return (body as { uid: string }).uid;
  }
  return null;
}

/** What keeps a 2xx body from being the completion body of this request, or null. */
export function completionProblem(body: unknown, workId: string): string | null {
  if (!body || typeof body !== 'object') return 'the body is not a JSON object';
  const b = body as Record<string, unknown>;
  if (b.status !== 'done') return `body status is ${JSON.stringify(b.status)}, not "done"`;
  if (b.id !== workId) return `body id is ${JSON.stringify(b.id)}, not ${JSON.stringify(workId)}`;
  if (typeof b.uid !== 'string' || b.uid === '') return 'the body carries no Pod UID';
  return null;
}
