// The facts a run document's `platform` states about the platform, as a list every report
// prints the same way (`label: value (note)`), whichever platform wrote it. New documents
// carry the platform's own `details`; older ones listed the facts as fields of their own
// (pid1, serviceProxy, context, …), read here into the same list. A document is untrusted:
// a fact of the wrong shape is left out, never shown as half-read.
import type { z } from 'zod';
import { PlatformTimingSchema, type RunDocument } from './run-document.js';

export interface Fact {
  key: string;
  label: string;
  value: string | number | boolean;
  note?: string;
  brief?: boolean;
}

type DocumentPlatform = RunDocument['platform'];

export function platformFacts(platform: DocumentPlatform): Fact[] {
  if (Array.isArray(platform.details)) return platform.details.filter(isFact);
  return legacyFacts(platform);
}

/** One fact by key (`pid1`, `serviceProxy`, `preStopAction`), from new and old documents alike. */
export function platformFact(platform: DocumentPlatform, key: string): Fact | undefined {
  return platformFacts(platform).find((f) => f.key === key);
}

/**
 * The emulated control-plane delays as numbers (the embedded runtime's), or undefined where
 * the document states none (a real cluster, or a document written before they were kept as
 * numbers) or states them in a shape that does not parse — never half-read.
 */
export function platformTiming(platform: { timing?: unknown }): PlatformTiming | undefined {
  const parsed = PlatformTimingSchema.safeParse(platform.timing);
  return parsed.success ? parsed.data : undefined;
}
export type PlatformTiming = z.infer<typeof PlatformTimingSchema>;

/** `yes`/`no` for a boolean, the value itself otherwise. */
export function factValue(fact: Fact): string {
  return typeof fact.value === 'boolean' ? (fact.value ? 'yes' : 'no') : String(fact.value);
}

function isFact(value: unknown): value is Fact {
  if (!value || typeof value !== 'object') return false;
  const f = value as Record<string, unknown>;
  return (
    typeof f.key === 'string' &&
    typeof f.label === 'string' &&
    ['string', 'number', 'boolean'].includes(typeof f.value) &&
    (f.note === undefined || typeof f.note === 'string') &&
    (f.brief === undefined || typeof f.brief === 'boolean')
  );
}

/**
 * A document written before `details`: the fields it has, in the order the reports showed
 * them. PID 1 and the Service proxy were the embedded runtime's heading facts; a cluster's
 * document also said pid1, but the reports did not show it, and still do not.
 */
function legacyFacts(p: DocumentPlatform): Fact[] {
  const facts: Fact[] = [];
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const note = (v: unknown) => (str(v) ? { note: str(v)! } : {});
  const local = p.serviceProxy !== undefined || p.context === undefined;
  if (typeof p.pid1 === 'boolean' && local)
    facts.push({ key: 'pid1', label: 'PID 1', value: p.pid1, ...note(p.pid1Reason), brief: true });
  if (str(p.serviceProxy))
    facts.push({
      key: 'serviceProxy',
      label: 'Service proxy',
      value: str(p.serviceProxy)!,
      ...note(p.serviceProxyReason),
      brief: true,
    });
  if (str(p.context)) facts.push({ key: 'context', label: 'context', value: str(p.context)! });
  if (str(p.serverVersion))
    facts.push({ key: 'serverVersion', label: 'server version', value: str(p.serverVersion)! });
  if (str(p.preStopAction))
    facts.push({
      key: 'preStopAction',
      label: 'preStop action',
      value: str(p.preStopAction)!,
      ...note(p.preStopActionReason),
    });
  return facts;
}
