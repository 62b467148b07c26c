// What one platform registers (./registry.ts): its name, its flags as data, and how to open
// it. The CLI turns the flags into commander Options (src/cli/platform-session.ts) and the
// shared test suite opens platforms through the same entries, so neither lists platforms
// itself. Flags are data here because commander belongs to the CLI layer.
import type { ManifestOptions } from '../workload/manifests.js';
import type { Platform } from './types.js';

/** One flag of a platform, in commander's syntax; the CLI builds the Option from it. */
export interface FlagSpec {
  /** `--timing <profile>`, `-n, --namespace <ns>`, `--no-pid1`. */
  flags: string;
  /** The key of its value among the parsed options (commander's camel case: `serviceProxy`). */
  attribute: string;
  description: string;
  choices?: readonly string[];
  /**
   * The value when the flag is not given (for `--no-x`, true). A platform's flags have no
   * other defaults: that a flag was given at all must be visible, so that another platform
   * can refuse it.
   */
  default?: string | boolean;
}

/** What a run plan needs to know of the platform (src/experiment/plan.ts PlanOptions). */
export interface SessionPlanOptions {
  namespace?: string;
  manifest?: ManifestOptions;
  /** Slower platforms (a real cluster pulling an image) need longer start-up limits. */
  startupMs?: number;
}

/**
 * The CPU the cluster's schedulable Nodes can give Pods (status.allocatable), as far as this
 * identity may read it: `forbidden` and `failed` are answers, not errors (a check that only
 * warns must not stop a run).
 */
export type ClusterCpu =
  | {
      read: 'read';
      /** Nodes a draincheck Pod can land on: not cordoned, Ready, no NoSchedule/NoExecute taint. */
      schedulableNodes: number;
      /** Their allocatable CPU summed, in millicores. */
      allocatableMilliCpu: number;
      /** Every Node was listed (false: the first page only, a lower bound). */
      complete: boolean;
    }
  | { read: 'forbidden' | 'failed'; detail: string };

/** A platform opened once per command (or per test); every run gets a `newPlatform()`. */
export interface PlatformSession {
  name: string;
  newPlatform(): Platform;
  planOptions: SessionPlanOptions;
  /** What CPU the platform's Nodes offer (a cluster only; the embedded runtime measures its strain). */
  clusterCpu?(): Promise<ClusterCpu>;
  close(): Promise<void>;
}

/** The parsed flag values, by attribute (only this platform's flags are read). */
export type FlagValues = Record<string, unknown>;

export interface PlatformEntry {
  /** `--platform <name>`. */
  name: string;
  /** For `--platform`'s help: `local (the embedded runtime)`. */
  description: string;
  /** How a refusal names it: `--timing applies only to the embedded runtime (--platform local)`. */
  named: string;
  /** The hint when one of its flags is given with another platform. */
  refusedHint: string;
  flags: readonly FlagSpec[];
  /**
   * Opens it with the parsed flag values. Keep the module that registers the entry light: a
   * platform whose client library is slow to load imports it here, with `await import()`.
   */
  open(values: FlagValues): Promise<PlatformSession>;
  /** Where a container's whole output can be read when it failed (DC_POD_FAILED's hint). */
  outputHint(where: { namespace: string; pod: string }): string;
  /**
   * What removes the objects a run left behind (a failed cleanup), given the flag values the
   * user ran with — said on stderr with exit code 4 (src/cli/leftovers.ts).
   */
  leftoversHint(runId: string, values: FlagValues): string;
  /**
   * `draincheck cleanup --platform NAME`: removes what runs that did not end (killed) left
   * behind on this platform — each platform knows what that can be and how to tell a live
   * run's objects from a dead one's.
   */
  cleanup(values: FlagValues, options: PlatformCleanupOptions): Promise<PlatformCleanupResult>;
}

/** `draincheck cleanup`'s own flags (the platform's flags come as FlagValues). */
export interface PlatformCleanupOptions {
  /** `--run`: only this run's objects. */
  runId?: string;
  /** `--dry-run`: list what would be removed, remove nothing. */
  dryRun: boolean;
  /** `--force`: also runs that look in progress. */
  force: boolean;
  /** `--older-than`, in ms. */
  olderThanMs?: number;
}

export interface PlatformCleanupResult {
  /** Where it looked, for the output: `context kind-kind, namespace lab`, `this host`. */
  where: string;
  /** What was (with --dry-run: would be) removed, one name each. */
  removed: string[];
  /** What was left alone, each with why. */
  kept: string[];
}

/** Shared by the platforms that run the preStop hook in either form (local and kube). */
export const preStopActionFlag: FlagSpec = {
  flags: '--prestop-action <kind>',
  attribute: 'prestopAction',
  description:
    'how the preStop sleep is done: the built-in sleep action or exec sleep (default: sleep on a 1.30+ server, exec below)',
  choices: ['sleep', 'exec'],
};

/** The --prestop-action value (commander has checked it against its choices). */
export function preStopActionOf(value: unknown): 'sleep' | 'exec' | undefined {
  return value === 'exec' || value === 'sleep' ? value : undefined;
}
