// The platforms draincheck runs on, one registration line each. The CLI builds `--platform`
// and every platform's flags from this list (src/cli/platform-session.ts), and the shared
// test suite opens its platforms through it (openRegistered in test/experiment/shared-suite.ts): a new platform
// is one folder with an entry (./entry.ts) and one line here — docs/ARCHITECTURE.md, "Adding
// a platform".
import { DraincheckError } from '../errors.js';
import type { FlagSpec, FlagValues, PlatformEntry, PlatformSession } from './entry.js';
import { kubeEntry } from './kube/entry.js';
import { localEntry } from './local/entry.js';

export type { FlagSpec, FlagValues, PlatformEntry, PlatformSession } from './entry.js';

export const platforms: readonly PlatformEntry[] = [localEntry, kubeEntry];

export function platformEntry(name: string): PlatformEntry {
  const entry = platforms.find((p) => p.name === name);
  if (!entry)
    throw new DraincheckError('DC_USAGE', `no platform named ${JSON.stringify(name)}`, {
      hint: `--platform takes ${platforms.map((p) => p.name).join(' or ')}`,
    });
  return entry;
}

/** Every platform's flags once, in the order of the entries (a shared flag where it last appears). */
export function allPlatformFlags(): FlagSpec[] {
  const byFlags = new Map<string, FlagSpec>();
  for (const entry of platforms)
    for (const spec of entry.flags) {
      byFlags.delete(spec.flags);
      byFlags.set(spec.flags, spec);
    }
  return [...byFlags.values()];
}

function given(spec: FlagSpec, values: FlagValues): boolean {
  const value = values[spec.attribute];
  return value !== undefined && value !== spec.default;
}

/**
 * A flag of another platform that this one does not take is a usage error, named with the
 * platform it belongs to. A flag at its default (`--client in-cluster`, `--pid1`) was not given.
 */
export function checkFlags(entry: PlatformEntry, values: FlagValues): void {
  const own = new Set(entry.flags.map((f) => f.flags));
  for (const other of platforms) {
    if (other === entry) continue;
    const foreign = other.flags
      .filter((f) => !own.has(f.flags) && given(f, values))
      .map((f) => f.flags.replace(/^-\w, /, '').replace(/ <.*$/, ''));
    if (foreign.length > 0)
      throw new DraincheckError(
        'DC_USAGE',
        `${foreign.join(', ')} ${foreign.length > 1 ? 'apply' : 'applies'} only to ${other.named}`,
        { hint: other.refusedHint },
      );
  }
}

/** Opens the named platform with the parsed flags, once they are its own (checkFlags). */
export async function openPlatform(name: string, values: FlagValues): Promise<PlatformSession> {
  const entry = platformEntry(name);
  checkFlags(entry, values);
  return entry.open(values);
}
