// The one integer validator: every whole-number setting — scenario flags, the lab server's flags
// and env, `draincheck client`'s flags, `GET /work?ms=` — is read by parseInteger, so one rule
// and one message hold everywhere: decimal digits only (no sign, exponent, fraction or hex),
// a safe integer, within the setting's range.
import { z } from 'zod';
import { quote } from '../errors.js';

export interface IntegerRange {
  /** How the setting is named in the message: `--work-ms`, `--port / PORT`, `ms`. */
  label: string;
  min: number;
  max: number;
}

/** The longest timer Node keeps (2^31 - 1 ms); a longer one fires after 1 ms. */
export const TIMER_MAX_MS = 2_147_483_647;

/** `raw` (a number, or its decimal digits as text) as an integer within the range, or why not. */
export function parseInteger(
  raw: unknown,
  { label, min, max }: IntegerRange,
): { ok: true; value: number } | { ok: false; message: string } {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw : '';
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    return { ok: false, message: `${label} must be an integer from ${min} to ${max}, got ${quote(raw)}` };
  return { ok: true, value: n };
}

/**
 * parseInteger as a zod schema for flags and env (text or number in, the integer out; its
 * message as the issue); text is trimmed first, as a shell or a manifest may leave spaces.
 */
export function integerSchema(range: IntegerRange) {
  return z.union([z.number(), z.string()]).transform((raw, ctx) => {
    const parsed = parseInteger(typeof raw === 'string' ? raw.trim() : raw, range);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.message });
    return z.NEVER;
  });
}
