// Validation of `GET /work?ms=N&id=R`. A bad parameter is an HTTP 400 naming it, never a
// silent default: the runner must know the server held the request as long as asked.
import { parseInteger } from '../util/integer.js';

/** The longest a work request may be held (`ms`), for the server, the client and the scenario. */
export const WORK_MS_MAX = 600_000;
/** A work request id, for the server (`id`) and `draincheck client --work-id`. */
export const WORK_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export interface WorkParams {
  ms: number;
  id: string;
}

export interface ParamError {
  code: 'missing-parameter' | 'invalid-parameter';
  message: string;
  parameter: string;
}

export function parseWorkParams(
  query: URLSearchParams,
  nextId: () => string,
): { ok: true; value: WorkParams } | { ok: false; error: ParamError } {
  const msValues = query.getAll('ms');
  if (msValues.length === 0) {
    return fail('missing-parameter', 'ms', 'ms is required: the number of milliseconds to hold the request');
  }
  if (msValues.length > 1) return fail('invalid-parameter', 'ms', 'ms must be given once');
  const ms = parseInteger(msValues[0] ?? '', { label: 'ms', min: 0, max: WORK_MS_MAX });
  if (!ms.ok) return fail('invalid-parameter', 'ms', ms.message);
  const idValues = query.getAll('id');
  if (idValues.length > 1) return fail('invalid-parameter', 'id', 'id must be given once');
  const id = idValues[0] ?? nextId();
  if (!WORK_ID_PATTERN.test(id)) {
    return fail(
      'invalid-parameter',
      'id',
      `id must be 1-64 characters of A-Z a-z 0-9 . _ -, got ${JSON.stringify(id.slice(0, 80))}`,
    );
  }
  return { ok: true, value: { ms: ms.value, id } };
}

function fail(code: ParamError['code'], parameter: string, message: string) {
  return { ok: false as const, error: { code, parameter, message } };
}
