// Which form the preStop sleep takes on this cluster. The built-in `sleep` action
// (LifecycleHandler.sleep, feature gate PodLifecycleSleepAction) is alpha in 1.29 and beta,
// on by default, since 1.30 (KEP-3960). An older API server does not know the field: it drops
// it silently on decoding, leaving a preStop with no handler, and refuses the Pod with a 422
// ("must specify a handler type"). So below 1.30 the sleep runs as `exec sleep N` in the image,
// unless --prestop-action forces a form.
export type PreStopAction = 'sleep' | 'exec';

export const SLEEP_ACTION_SINCE = { major: 1, minor: 30 };

export interface PreStopChoice {
  action: PreStopAction;
  /** Why, in one sentence: for the run document and the report. */
  reason: string;
}

/** `v1.24.0-alpha.1`, `v1.30.4-eks-a1b2`, `v1.31.0+k3s1` → {1, 24}; anything else → null. */
export function parseServerVersion(gitVersion: string | undefined): { major: number; minor: number } | null {
  const m = /^v?(\d{1,4})\.(\d{1,4})(?:\D|$)/.exec(gitVersion ?? '');
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
}

export function choosePreStopAction(
  gitVersion: string | undefined,
  forced: PreStopAction | undefined,
): PreStopChoice {
  if (forced) return { action: forced, reason: `--prestop-action ${forced}` };
  const v = parseServerVersion(gitVersion);
  const since = `${SLEEP_ACTION_SINCE.major}.${SLEEP_ACTION_SINCE.minor}`;
  if (!v) {
    return {
      action: 'exec',
      reason: `server version ${JSON.stringify(gitVersion ?? '')} unknown: exec sleep works on every version`,
    };
  }
  const hasSleep =
    v.major > SLEEP_ACTION_SINCE.major ||
    (v.major === SLEEP_ACTION_SINCE.major && v.minor >= SLEEP_ACTION_SINCE.minor);
  return hasSleep
    ? {
        action: 'sleep',
        reason: `server ${gitVersion ?? ''} has the preStop sleep action on by default (${since}+)`,
      }
    : {
        action: 'exec',
        reason: `server ${gitVersion ?? ''} is older than ${since}, where the preStop sleep action is on by default`,
      };
}
