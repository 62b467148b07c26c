// A probe's numbers as the API server takes them, in one place for every probe field: the
// file's probes are checked and defaulted here before anything runs (pod-file.ts), and the
// embedded kubelet's prober reads its period, timeout and thresholds through the same defaults
// (platform/local/prober.ts). Without it a `periodSeconds: 0` (or -1) forked an exec probe in a
// tight loop, and 1e12 overflowed Node's timer into a 1 ms one.
//
// Kubernetes: pkg/apis/core/v1/defaults.go SetDefaults_Probe sets timeoutSeconds 1,
// periodSeconds 10, successThreshold 1 and failureThreshold 3 where the field is 0 (absent);
// initialDelaySeconds stays 0. pkg/apis/core/validation/validation.go validateProbe refuses a
// negative initialDelaySeconds, timeoutSeconds, periodSeconds, successThreshold or
// failureThreshold (ValidateNonnegativeField) and a terminationGracePeriodSeconds that is not
// greater than 0; validateContainers requires successThreshold 1 for liveness and startup
// probes ("must be 1"). The five are int32 in the API (types.go Probe), so a larger number is
// not a probe Kubernetes would store either.
import type { V1Probe } from '@kubernetes/client-node';
import { parseInteger } from '../util/integer.js';

export type ProbeKind = 'readiness' | 'liveness' | 'startup';

/** The largest int32: the API's type for every probe number. */
export const INT32_MAX = 2_147_483_647;

/** SetDefaults_Probe: the value a 0 or absent field gets. */
export const PROBE_DEFAULTS = {
  initialDelaySeconds: 0,
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
} as const;

type ProbeNumberField = keyof typeof PROBE_DEFAULTS;
const NUMBER_FIELDS = Object.keys(PROBE_DEFAULTS) as ProbeNumberField[];

/** A probe's numbers after defaulting: what the kubelet runs with. */
export type ProbeSettings = Record<ProbeNumberField, number>;

/**
 * The probe's numbers with SetDefaults_Probe applied (a 0 or absent field gets the default).
 * A value the API would refuse (negative, not a whole number) is never in a checked probe;
 * here it also gets the default, so no caller can be driven into a tight loop.
 */
export function probeSettings(probe: V1Probe): ProbeSettings {
  const out = {} as ProbeSettings;
  for (const name of NUMBER_FIELDS) {
    const parsed = parseInteger(probe[name], { label: name, min: 1, max: INT32_MAX });
    out[name] = typeof probe[name] === 'number' && parsed.ok ? parsed.value : PROBE_DEFAULTS[name];
  }
  return out;
}

/**
 * The probe at `path` (e.g. `spec.containers[0].readinessProbe`) validated as the API server
 * does: the probe as written (a cluster's API server defaults it; the embedded kubelet reads
 * it through probeSettings), or the first problem, naming the field's path.
 */
export function checkProbe(
  probe: Record<string, unknown>,
  path: string,
  kind: ProbeKind,
): { ok: true; probe: V1Probe } | { ok: false; message: string } {
  for (const name of NUMBER_FIELDS) {
    const raw = probe[name];
    if (raw === undefined || raw === null) continue;
    // parseInteger takes decimal digits only: -1, 1.5, 1e12 as text, "10" as a string of a
    // number field are refused as the API's int32 decoding and validation would.
    const parsed =
      typeof raw === 'number'
        ? parseInteger(raw, { label: `${path}.${name}`, min: 0, max: INT32_MAX })
        : ({ ok: false, message: `${path}.${name} must be a number` } as const);
    if (!parsed.ok) return parsed;
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    // int64 in the API and "must be greater than 0"; bounded here like the other numbers.
    const parsed =
      typeof grace === 'number'
        ? parseInteger(grace, { label: `${path}.terminationGracePeriodSeconds`, min: 1, max: INT32_MAX })
        : ({ ok: false, message: `${path}.terminationGracePeriodSeconds must be a number` } as const);
    if (!parsed.ok) return parsed;
  }
  const settings = probeSettings(probe);
  if (kind !== 'readiness' && settings.successThreshold !== 1)
    return {
      ok: false,
      message: `${path}.successThreshold must be 1 for a ${kind} probe, got ${settings.successThreshold}`,
    };
  return { ok: true, probe: probe };
}
