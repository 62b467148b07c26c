// A CPU quantity in millicores: resource.Quantity's forms that CPU takes — a decimal count
// ("2", "0.5") or with the SI suffixes m, u, n ("3920m", "250000u") — as in draincheck's own
// manifests ("500m") and a Node's status.allocatable.cpu. Anything else (another suffix, an
// exponent, a string too long to be a count) is null: untrusted input is never guessed at.
// @kubernetes/client-node's quantityToScalar is not exported from its entry point, and the
// local platform never loads that library.
const SCALE: Record<string, number> = { '': 1000, m: 1, u: 1e-3, n: 1e-6 };

export function milliCpuOf(quantity: unknown): number | null {
  if (typeof quantity !== 'string' || quantity.length > 24) return null;
  const m = /^(\d{1,12})(?:\.(\d{1,9}))?([mun]?)$/.exec(quantity);
  if (!m) return null;
  // Rounded up, as resource.Quantity's MilliValue does ("1u" is 1m, not 0).
  return Math.ceil(Number(`${m[1]}.${m[2] ?? '0'}`) * SCALE[m[3]!]! - 1e-9);
}
