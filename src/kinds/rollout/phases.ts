// The rollout's phases as named states with one transition table (the shape of
// src/platform/local/pod-worker-state.ts). A phase names what the runner is doing in it; the
// progress line on stderr is the phase's own, so what the user reads is where the run is. A
// move the table does not allow throws (a bug in the runner). The ways out — `failed` (a
// progress deadline, an observer's fatal error, a load that never began, a result that could not
// be written) and `interrupted` (a signal) — still go on to the join: the records so far are
// joined and saved, the document marked incomplete. `refused` (bad input the API refused) ends
// without a document.

export const rolloutPhases = [
  /** The namespace, the Service and the Deployment applied; the watches started. */
  'applying',
  /** Waiting until the Deployment is available (or its progress deadline). */
  'available',
  /** The Service answers, the load runs: the before-window. */
  'warm',
  /** `kubectl rollout restart`, and waiting until the Deployment has rolled. */
  'rolling',
  /** The after-window, until every old Pod is gone too (bounded by the grace period). */
  'settling',
  /** The load stopped, its last requests and the journals' last lines awaited. */
  'draining',
  /** Records × journal × lifecycles → the final record file and the counts. */
  'joining',
  'done',
  'failed',
  'interrupted',
  'refused',
] as const;
export type RolloutPhase = (typeof rolloutPhases)[number];

/** The whole machine: from each phase, the phases it may move to. */
export const rolloutTransitions: Readonly<Record<RolloutPhase, readonly RolloutPhase[]>> = {
  applying: ['available', 'failed', 'interrupted', 'refused'],
  available: ['warm', 'failed', 'interrupted', 'refused'],
  warm: ['rolling', 'failed', 'interrupted', 'refused'],
  rolling: ['settling', 'failed', 'interrupted', 'refused'],
  settling: ['draining', 'failed', 'interrupted'],
  draining: ['joining', 'failed', 'interrupted'],
  // What was recorded before the run ended is still joined and saved.
  failed: ['joining'],
  interrupted: ['joining'],
  // A result that cannot be written fails the join; the document says so.
  joining: ['done', 'failed'],
  done: [],
  refused: [],
};

/** The progress line each phase prints as it begins (null: none). */
export const phaseLines: Readonly<Record<RolloutPhase, string | null>> = {
  applying: 'applying',
  available: 'waiting until available',
  warm: 'load: before',
  rolling: 'rolling',
  settling: 'load: after',
  draining: 'load: stopping',
  joining: 'join',
  done: null,
  failed: null,
  interrupted: 'interrupted',
  refused: null,
};

/** The current phase, moved only along the table; each move prints its line. */
export class RolloutPhases {
  private current: RolloutPhase = 'applying';
  private readonly passed: RolloutPhase[] = ['applying'];

  constructor(private readonly onLine: (line: string) => void = () => undefined) {
    onLine(phaseLines.applying!);
  }

  get phase(): RolloutPhase {
    return this.current;
  }

  /** Whether the run reached `phase` (the document's facts follow from it: rolled, settled). */
  reached(phase: RolloutPhase): boolean {
    return this.passed.includes(phase);
  }

  to(next: RolloutPhase): void {
    if (!rolloutTransitions[this.current].includes(next))
      throw new Error(`rollout phase ${this.current} → ${next} is not in the transition table`);
    this.current = next;
    this.passed.push(next);
    const line = phaseLines[next];
    if (line !== null) this.onLine(line);
  }

  /** A line about the current phase (`load: after (old Pods still terminating)`). */
  detail(words: string): void {
    this.onLine(`${phaseLines[this.current] ?? this.current} (${words})`);
  }
}
