// A container of a Pod other than its app (the first entry of `containers`, which the pod
// worker runs with its probes and endpoint): a regular sidecar (a later entry of `containers`)
// or a native one (an init container with restartPolicy: Always, KEP-753). It shares the Pod's
// network (its address, or its network namespace), has a log and a status of its own, and is
// stopped by the pod worker in the kubelet's order (termination-order.ts). Its journal lines
// (`draincheck sidecar-proxy`) are read back as untrusted text: parsed, bounded, or dropped.
import type { V1Container, V1ContainerStatus } from '@kubernetes/client-node';
import { parseSidecarJournalLine, type SidecarJournalLine } from '../../server/sidecar-proxy.js';
import { ContainerProcess, type ContainerExit } from './container.js';
import { LogBuffer } from './log-buffer.js';
import type { ContainerRole } from './termination-order.js';

/**
 * The journal lines of one sidecar the runtime reports as events, at most (the rest only in its
 * log): its requests and responses (the probes' among them, two a second), and separately its
 * signal, errors and exit — so a long run's probes never crowd out how the proxy ended.
 */
export const SIDECAR_JOURNAL_EVENTS_MAX = 200;
export const SIDECAR_LIFECYCLE_EVENTS_MAX = 50;

/** A sidecar container's life, named as the kubelet's container states are. */
export type SidecarState = 'Waiting' | 'Running' | 'Terminated';

export class SidecarContainer {
  readonly log = new LogBuffer();
  process: ContainerProcess | undefined;
  exit: ContainerExit | undefined;
  /** Settles once the process (if one was started) is gone. */
  readonly exited: Promise<void>;
  private markExited!: () => void;
  private journalLines = 0;
  private lifecycleLines = 0;
  waitingReason = 'PodInitializing';

  constructor(
    readonly spec: V1Container,
    readonly role: ContainerRole,
  ) {
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  get name(): string {
    return this.spec.name;
  }

  get state(): SidecarState {
    if (this.exit) return 'Terminated';
    return this.process ? 'Running' : 'Waiting';
  }

  /**
   * Starts the process. `onJournal` gets its journal lines (at most SIDECAR_JOURNAL_EVENTS_MAX),
   * `onExit` its exit once.
   */
  async start(options: {
    argv: string[];
    env: Record<string, string>;
    pid1: boolean;
    netns?: string;
    onJournal: (line: SidecarJournalLine) => void;
    onExit: (exit: ContainerExit) => void;
  }): Promise<void> {
    try {
      this.process = await ContainerProcess.start({
        argv: options.argv,
        env: options.env,
        pid1: options.pid1,
        ...(options.netns ? { netns: options.netns } : {}),
        ...(this.spec.workingDir ? { cwd: this.spec.workingDir } : {}),
        onOutput: (line) => {
          this.log.append(line);
          const journal = parseSidecarJournalLine(line);
          if (!journal) return;
          const traffic = journal.event === 'proxy-request' || journal.event === 'proxy-response';
          if (
            traffic
              ? this.journalLines >= SIDECAR_JOURNAL_EVENTS_MAX
              : this.lifecycleLines >= SIDECAR_LIFECYCLE_EVENTS_MAX
          )
            return;
          if (traffic) this.journalLines += 1;
          else this.lifecycleLines += 1;
          options.onJournal(journal);
        },
      });
    } catch (error) {
      this.waitingReason = 'StartError';
      this.log.close();
      this.markExited();
      throw error;
    }
    void this.process.exited.then(
      (exit) => {
        this.exit = exit;
        this.log.close();
        this.markExited();
        options.onExit(exit);
      },
      () => this.markExited(),
    );
  }

  /** Never started: nothing will run (its waiting promise settles). */
  abandon(): void {
    if (this.process) return;
    this.log.close();
    this.markExited();
  }

  signal(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    if (!this.process || this.exit) return false;
    return this.process.signal(signal);
  }

  killNow(): void {
    this.process?.killNow();
  }

  /** Its entry of containerStatuses (regular) or initContainerStatuses (native). */
  status(): V1ContainerStatus {
    const base = {
      name: this.spec.name,
      image: this.spec.image ?? '',
      imageID: '',
      restartCount: 0,
    };
    if (this.exit && this.process)
      return {
        ...base,
        ready: false,
        started: false,
        state: {
          terminated: {
            exitCode: this.exit.exitCode,
            ...(this.exit.signal ? { signal: this.exit.signal === 'SIGKILL' ? 9 : 15 } : {}),
            reason: this.exit.exitCode === 0 ? 'Completed' : 'Error',
            startedAt: this.process.startedAt,
            finishedAt: this.exit.finishedAt,
            containerID: `draincheck://${this.process.hostPid}`,
          },
        },
      };
    if (this.process)
      // No readiness probe of its own: ready while it runs (as the kubelet's status for a
      // container without one).
      return {
        ...base,
        ready: true,
        started: true,
        state: { running: { startedAt: this.process.startedAt } },
      };
    return { ...base, ready: false, started: false, state: { waiting: { reason: this.waitingReason } } };
  }
}
