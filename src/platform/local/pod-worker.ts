// The kubelet's pod worker for one Pod: start the container, report status, run the readiness
// probe, and on deletion follow the documented termination sequence — preStop (if any),
// SIGTERM, SIGKILL at the end of the grace period (at least 2 s after preStop), the
// terminated status, the final grace-0 update and the removal of the Pod object.
// Where it is in that life is one named state (pod-worker-state.ts, after the kubelet's
// pod_workers.go); every step below moves it through PodWorkerStatus.apply().
// A Pod may carry sidecars besides its app (the first entry of `containers`): regular ones
// (later entries of `containers`) and native ones (init containers with restartPolicy Always),
// each a SidecarContainer in the Pod's network; the deletion stops them all in the kubelet's
// order (termination-order.ts: regular containers together, native sidecars after them, last
// declared first), and the Pod's terminated status waits for every container.
import { existsSync } from 'node:fs';
import type {
  V1Container,
  V1ContainerStatus,
  V1PodSpec,
  V1LifecycleHandler,
  V1Pod,
  V1PodCondition,
  V1Probe,
} from '@kubernetes/client-node';
import { PID1_ANNOTATION } from '../../workload/labels.js';
import { probeSettings } from '../../workload/probe-fields.js';
import type { AddressAllocator, Endpoint } from './addresses.js';
import { ContainerProcess, type ContainerExit } from './container.js';
import { containerArgv, containerEnv, ContainerSpecError, resolvePort } from './container-spec.js';
import { REMAPPED_PORT_ANNOTATION } from './endpointslice-controller.js';
import { LogBuffer } from './log-buffer.js';
import type { PodNetwork, PodNetworks } from './pod-network.js';
import { PodWorkerStatus, type PodWorkerEvent } from './pod-worker-state.js';
import { runPreStop, type PreStopResult } from './prestop.js';
import { ContainerProber, probeTypeWords, type ProbeResult, type ProbeType } from './prober.js';
import type { Recorder } from './recorder.js';
import type { ObjectStore } from './store.js';
import type { RuntimeTiming } from './timing.js';
import type { RuntimeRule } from './rules-off.js';
import { SidecarContainer } from './sidecar-container.js';
import {
  byContainerName,
  isRestartableInitContainer,
  MINIMUM_GRACE_SECONDS,
  sigkillAfterSeconds,
  terminationPlan,
  type TerminationStep,
} from './termination-order.js';

/**
 * How long, and how many times, a Pod whose port is taken on the shared host network waits for
 * another Pod's container to exit and starts its container again (waitForPort).
 */
export const PORT_WAIT_ATTEMPTS = 5;
export const PORT_WAIT_MS = 120_000;

export interface KubeletDeps {
  store: ObjectStore;
  recorder: Recorder;
  allocator: () => Promise<AddressAllocator>;
  /**
   * The Pod with this loopback address is gone: the runtime gives the address back once no
   * Service rule names it (gone-addresses.ts). Absent: given back at once.
   */
  addressGone?: (address: Endpoint) => void;
  timing: RuntimeTiming;
  pid1: boolean;
  /** The Pod networks to give this container a network namespace from; none: the host's network. */
  podNetworks?: (container: V1Container) => PodNetworks | undefined;
  /** Why Pods without a namespace of their own share the host network (for a port conflict's message). */
  sharedNetworkReason?: () => string;
  /**
   * One Pod of such a server at a time on the shared host network: whether another Pod's
   * container runs now, and every container exit of the runtime (waitForPort).
   */
  portWait?: {
    othersRunning(self: PodWorker): boolean;
    onContainerExit(listener: () => void): () => void;
    containerExited(): void;
  };
  /** Test-only (LocalClusterOptions.rulesOff): Kubernetes rules this kubelet skips. */
  rulesOff?: ReadonlySet<RuntimeRule>;
}

export class PodWorker {
  readonly log = new LogBuffer();
  endpoint: Endpoint | undefined;
  private allocator: AddressAllocator | undefined;
  /** The loopback address was handed back as gone (addressGone). */
  private addressOff = false;
  /** The Pod's own network namespace and address, where it has one (pod-network.ts). */
  private network: PodNetwork | undefined;
  /** The server said its port was taken while the Pod shares the host network. */
  private addressInUse = false;
  private container: ContainerProcess | undefined;
  private prober: ContainerProber | undefined;
  /** The liveness and startup probers: stopped at the deletion (kubelet.go StopLivenessAndStartup). */
  private liveness: ContainerProber | undefined;
  private startup: ContainerProber | undefined;
  /** A kill has begun (a failed liveness/startup probe, or the deletion): signals are sent once. */
  private killing = false;
  /** The container's environment, for exec probes. */
  private containerEnv: Record<string, string> | undefined;
  private exit: ContainerExit | undefined;
  /** The container's argv, to start it again after a wait for the port (waitForPort). */
  private argv: string[] | undefined;
  /** Waiting for the port on the shared host network: ends the wait (restart: false to end terminal). */
  private portWaitEnd: ((restart: boolean) => void) | undefined;
  /** Container starts after a wait for the port, and when the first wait began. */
  private restarts = 0;
  private portWaitSince: number | undefined;
  /** SyncPod → TerminatingPod → TerminatedPod → RemovingPod → Removed (pod-worker-state.ts). */
  private readonly status = new PodWorkerStatus();
  /**
   * Aborted when the runtime shuts down (the kubelet's own context, not the Pod's state):
   * nothing new starts, no timer is set.
   */
  private readonly shutdown = new AbortController();
  /** Stops a running preStop hook at once (force deletion, runtime shutdown). */
  private readonly hookStop = new AbortController();
  /** The preStop hook in progress (it settles once its process, if any, is gone). */
  private hookRun: Promise<PreStopResult> | undefined;
  /** The SIGKILL at the end of the grace period, cancelled when the container exits first. */
  private killTimer: NodeJS.Timeout | undefined;
  /** Settles when start() is done (the kubelet's pod worker syncs one thing at a time). */
  private starting: Promise<void> = Promise.resolve();
  /** The Pod as last written: its identity stays readable after the object is gone. */
  private last: V1Pod;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly spec: V1Container;
  /** The Pod's other containers: regular sidecars, then native ones in declaration order. */
  private readonly sidecars: SidecarContainer[];

  constructor(
    private readonly namespace: string,
    private readonly name: string,
    private readonly deps: KubeletDeps,
  ) {
    const pod = deps.store.get<V1Pod>('pods', namespace, name);
    if (!pod) throw new Error(`pod ${namespace}/${name} does not exist`);
    this.last = pod;
    this.spec = pod.spec!.containers[0]!;
    this.sidecars = [
      ...pod.spec!.containers.slice(1).map((c) => new SidecarContainer(c, 'regular')),
      ...(pod.spec!.initContainers ?? [])
        .filter(isRestartableInitContainer)
        .map((c) => new SidecarContainer(c, 'native-sidecar')),
    ];
  }

  /** A sidecar's log (`kubectl logs -c NAME`), or undefined. */
  containerLog(name: string): LogBuffer | undefined {
    if (name === this.spec.name) return this.log;
    return this.sidecars.find((s) => s.name === name)?.log;
  }

  /**
   * The app's status and every sidecar's, as the kubelet lists them: containerStatuses sorted
   * by name, initContainerStatuses in the spec's order (kubelet_pods.go
   * convertToAPIContainerStatuses).
   */
  private writeStatuses(pod: V1Pod, app: V1ContainerStatus) {
    const regular = this.sidecars.filter((s) => s.role === 'regular').map((s) => s.status());
    const native = this.sidecars.filter((s) => s.role === 'native-sidecar').map((s) => s.status());
    pod.status!.containerStatuses = regular.length > 0 ? byContainerName([app, ...regular]) : [app];
    if (native.length > 0) pod.status!.initContainerStatuses = native;
  }

  /** The app container's status entry (found by name: a sidecar may sort before it). */
  private appStatus(pod: V1Pod): V1ContainerStatus {
    const statuses = pod.status!.containerStatuses!;
    return statuses.find((c) => c.name === this.spec.name) ?? statuses[0]!;
  }

  /** Every sidecar is running (a container without a readiness probe is ready while it runs). */
  private get sidecarsReady(): boolean {
    return this.sidecars.every((s) => s.state === 'Running');
  }

  /** The worker's state, for tests and the runtime's bookkeeping. */
  get state(): PodWorkerStatus['state'] {
    return this.status.state;
  }

  /** Moves the state (throws on a transition the table does not allow); false if ignored. */
  private transition(event: PodWorkerEvent): boolean {
    return this.status.apply(event);
  }

  private get removed(): boolean {
    return this.status.is('Removed');
  }

  private get disposed(): boolean {
    return this.shutdown.signal.aborted;
  }

  /** The Pod object now, or as last seen once it is gone (for its name, UID, deletion). */
  private current(): V1Pod {
    const pod = this.removed ? undefined : this.deps.store.get<V1Pod>('pods', this.namespace, this.name);
    if (pod) this.last = pod;
    return this.last;
  }

  /** Read-modify-write of the Pod object, unless it has been removed. */
  private update(mutate: (pod: V1Pod) => void): V1Pod | undefined {
    if (this.removed || this.disposed) return undefined;
    const pod = this.deps.store.get<V1Pod>('pods', this.namespace, this.name);
    if (!pod) return undefined;
    mutate(pod);
    this.last = this.deps.store.put('pods', pod);
    return this.last;
  }

  private after(ms: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.disposed) return undefined;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return t;
  }

  private cancel(t: NodeJS.Timeout | undefined) {
    if (!t) return;
    clearTimeout(t);
    this.timers.delete(t);
  }

  /** Starts the container; a deletion or shutdown that comes first stops the start. */
  start(): Promise<void> {
    this.starting = this.startContainer().catch((error: unknown) => {
      // Whatever went wrong is the Pod's state to report, never a crash of the runtime.
      this.failToStart('StartError', (error as Error).message);
    });
    return this.starting;
  }

  /** A deletion (or the runtime's shutdown) came before the container ran: do not start it. */
  private get abandoned(): boolean {
    return !this.status.is('SyncPod') || this.disposed;
  }

  private async startContainer(): Promise<void> {
    const now = new Date();
    this.update((pod) => {
      pod.status = {
        ...pod.status,
        phase: 'Pending',
        hostIP: '127.0.0.1',
        startTime: now,
        conditions: conditions(now, false),
      };
      this.writeStatuses(pod, status(this.spec, { waiting: { reason: 'ContainerCreating' } }, false));
    });
    let argv: string[];
    let env: Record<string, string>;
    const wantedPort = this.spec.ports?.[0]?.containerPort ?? 8080;
    try {
      argv = containerArgv(this.spec);
      const networks = this.deps.podNetworks?.(this.spec);
      if (networks) {
        // The Pod's network as on a node: its own namespace, so every port is its own.
        this.network = await networks.create();
        if (this.abandoned) {
          // Never an endpoint: nothing can route to it, so it needs no blackhole.
          this.network.close();
          this.network = undefined;
          return;
        }
        this.endpoint = { ip: this.network.ip, port: wantedPort, remapped: false };
      } else {
        this.allocator = await this.deps.allocator();
        if (this.abandoned) return;
        this.endpoint = await this.allocator.allocate(wantedPort);
        if (this.abandoned) {
          this.allocator.release(this.endpoint.ip);
          this.endpoint = undefined;
          return;
        }
      }
      env = containerEnv(this.spec, this.current(), this.endpoint.ip);
    } catch (error) {
      if (error instanceof ContainerSpecError) return this.failToStart(error.reason, error.message);
      throw error;
    }
    // The Pod IP, for servers that bind it (without a namespace of its own, the Pod's network
    // is emulated this way: the server binds the Pod IP, and the remapped port when the wanted
    // one was taken).
    env.HOST = this.endpoint.ip;
    if (this.endpoint.remapped) env.PORT = String(this.endpoint.port);
    if (this.endpoint.remapped && this.sidecars.length > 0)
      // The sidecar's port and the app's share the Pod's address: a remapped port would leave
      // one of them pointing at nothing.
      return this.failToStart(
        'StartError',
        `port ${wantedPort} is taken on ${this.endpoint.ip}: a Pod with sidecars needs its ports free on its own address (--pod-network isolated gives it a network namespace)`,
      );
    this.containerEnv = env;
    this.argv = argv;
    // Native sidecars start before the app, in declaration order (they are init containers:
    // KEP-753); regular ones with the app's other containers, after it.
    for (const sidecar of this.sidecars.filter((s) => s.role === 'native-sidecar'))
      if (!(await this.startSidecar(sidecar))) return this.abandonSidecars();
    await this.runContainer();
    if (!this.container) return this.abandonSidecars();
    for (const sidecar of this.sidecars.filter((s) => s.role === 'regular'))
      if (!(await this.startSidecar(sidecar))) return this.abandonSidecars();
  }

  /** The sidecars never started (a deletion, a failure first): nothing waits for them. */
  private abandonSidecars() {
    for (const sidecar of this.sidecars) sidecar.abandon();
  }

  /** Starts one sidecar in the Pod's network; false when the Pod must not go on starting. */
  private async startSidecar(sidecar: SidecarContainer): Promise<boolean> {
    if (this.abandoned || this.removed) return false;
    let argv: string[];
    let env: Record<string, string>;
    try {
      argv = containerArgv(sidecar.spec);
      env = containerEnv(sidecar.spec, this.current(), this.endpoint!.ip);
    } catch (error) {
      if (!(error instanceof ContainerSpecError)) throw error;
      this.failToStart(error.reason, `container ${sidecar.name}: ${error.message}`);
      return false;
    }
    env.HOST = this.endpoint!.ip;
    this.deps.recorder.podEvent(this.current(), 'Normal', 'Created', `Created container ${sidecar.name}`);
    try {
      await sidecar.start({
        argv,
        env,
        pid1: this.deps.pid1,
        ...(this.network ? { netns: this.network.netns } : {}),
        onJournal: (line) =>
          this.deps.recorder.emit({
            namespace: this.namespace,
            source: 'kubelet',
            type: 'sidecar-journal',
            data: {
              container: sidecar.name,
              event: line.event,
              ...(line.id === undefined ? {} : { id: line.id }),
              ...(typeof line.status === 'number' ? { status: line.status } : {}),
              ...(typeof line.code === 'string' ? { code: line.code } : {}),
              ...(typeof line.inFlight === 'number' ? { inFlight: line.inFlight } : {}),
            },
          }),
        onExit: (exit) => this.onSidecarExit(sidecar, exit),
      });
    } catch (error) {
      this.failToStart('StartError', `container ${sidecar.name}: ${(error as Error).message}`);
      return false;
    }
    if (this.removed || this.disposed) {
      sidecar.killNow();
      return false;
    }
    this.deps.recorder.podEvent(this.current(), 'Normal', 'Started', `Started container ${sidecar.name}`);
    this.update((pod) => this.writeStatuses(pod, this.appStatus(pod)));
    return true;
  }

  /** A sidecar's process ended: its status (at the next relist) and the Pod's readiness. */
  private onSidecarExit(sidecar: SidecarContainer, exit: ContainerExit) {
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'container-exited',
      data: { container: sidecar.name, exitCode: exit.exitCode, signal: exit.signal, pid1: this.deps.pid1 },
    });
    this.after(this.deps.timing.containerStatusDelayMs, () => {
      if (this.status.is('RemovingPod', 'Removed')) return;
      this.update((pod) => {
        this.writeStatuses(pod, this.appStatus(pod));
        pod.status!.conditions = conditions(new Date(), false, pod.status!.conditions);
      });
    });
    this.releaseLogIfFinished();
  }

  /** Settles when every sidecar that was started has exited. */
  private sidecarsExited(): Promise<void> {
    return Promise.all(this.sidecars.map((s) => (s.process ? s.exited : Promise.resolve()))).then(
      () => undefined,
    );
  }

  /** Creates and starts the container process (again, after a wait for the port). */
  private async runContainer(): Promise<void> {
    const argv = this.argv!;
    const env = this.containerEnv!;
    this.deps.recorder.podEvent(this.current(), 'Normal', 'Created', 'Created container server');
    let container: ContainerProcess;
    try {
      container = await ContainerProcess.start({
        argv,
        env,
        pid1: this.deps.pid1,
        ...(this.network ? { netns: this.network.netns } : {}),
        ...(this.spec.workingDir ? { cwd: this.spec.workingDir } : {}),
        onOutput: (line) => {
          this.log.append(line);
          if (!this.network && ADDRESS_IN_USE.test(line)) this.addressInUse = true;
        },
      });
    } catch (error) {
      // Node names the program for a missing working directory (`spawn setpriv ENOENT`): the
      // container's workingDir is what is missing, said so (the runtime's own message names it).
      const cwd = this.spec.workingDir;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && cwd && !existsSync(cwd))
        return this.failToStart(
          'StartError',
          `workingDir ${JSON.stringify(cwd)} does not exist on this machine: chdir to cwd failed: no such file or directory`,
        );
      return this.failToStart('StartError', (error as Error).message);
    }
    this.container = container;
    if (this.removed || this.disposed) {
      // Force-deleted or shut down while the process was being spawned: it must not outlive that.
      container.killNow();
      this.log.close();
      return;
    }
    this.deps.recorder.podEvent(this.current(), 'Normal', 'Started', 'Started container server');
    void this.container.exited.then((exit) => this.onExit(exit));
    const startedAt = this.container.startedAt;
    this.update((pod) => {
      pod.metadata!.annotations = {
        ...pod.metadata!.annotations,
        [PID1_ANNOTATION]: String(this.deps.pid1),
        ...(this.endpoint!.remapped ? { [REMAPPED_PORT_ANNOTATION]: String(this.endpoint!.port) } : {}),
      };
      pod.status!.phase = 'Running';
      pod.status!.podIP = this.endpoint!.ip;
      pod.status!.podIPs = [{ ip: this.endpoint!.ip }];
      // `started` waits for a startup probe's success (worker.go; kubelet_pods.go).
      const last = this.appStatus(pod).lastState;
      this.writeStatuses(pod, {
        ...status(this.spec, { running: { startedAt } }, false, !this.spec.startupProbe),
        restartCount: this.restarts,
        ...(last ? { lastState: last } : {}),
      });
    });
    this.startProbers();
  }

  /**
   * A startup probe, if any, runs first: until it succeeds the readiness and liveness probes
   * do not probe (worker.go doProbe: "Disable other probes until container has started").
   */
  private startProbers() {
    const startup = this.spec.startupProbe;
    if (!startup) {
      this.startReadinessAndLiveness();
      return;
    }
    this.startup = this.newProber('startup', startup, (ok, last) => {
      if (!ok) return void this.killForProbe('startup', last);
      this.update((pod) => {
        this.appStatus(pod).started = true;
      });
      this.startReadinessAndLiveness();
    });
    this.startup.start();
  }

  private startReadinessAndLiveness() {
    if (!this.status.is('SyncPod', 'TerminatingPod') || this.exit || this.disposed) return;
    // initialDelaySeconds counts from the container's start (worker.go: time.Since(StartedAt)).
    const sinceStart = Date.now() - (this.container?.startedAt.getTime() ?? Date.now());
    const firstDelay = (probe: V1Probe) =>
      Math.max(0, probeSettings(probe).initialDelaySeconds * 1000 - sinceStart);
    const liveness = this.spec.livenessProbe;
    // A Pod already being deleted gets no liveness probing (worker.go doProbe).
    if (liveness && this.status.is('SyncPod')) {
      this.liveness = this.newProber(
        'liveness',
        liveness,
        (ok, last) => {
          if (!ok) void this.killForProbe('liveness', last);
        },
        firstDelay(liveness),
      );
      this.liveness.start();
    }
    const probe = this.spec.readinessProbe;
    if (!probe) {
      // No readiness probe: ready as soon as the container runs (and has started).
      this.setReady(true);
      return;
    }
    this.prober = this.newProber('readiness', probe, (ready) => this.setReady(ready), firstDelay(probe));
    this.prober.start();
  }

  /** One probe worker: its counted results are `probe` events, its failures `Unhealthy` Events. */
  private newProber(
    type: ProbeType,
    probe: NonNullable<V1Container['readinessProbe']>,
    onChange: (ok: boolean, last: ProbeResult) => void,
    firstDelayMs?: number,
  ): ContainerProber {
    const port = resolvePort(probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port, this.spec);
    return new ContainerProber({
      probe: this.inPodNetwork(probe),
      type,
      env: this.containerEnv ?? {},
      host: this.endpoint!.ip,
      port:
        port === this.spec.ports?.[0]?.containerPort ? this.endpoint!.port : (port ?? this.endpoint!.port),
      ...(firstDelayMs === undefined ? {} : { firstDelayMs }),
      onReadyChange: (ok, last) => {
        this.deps.recorder.emit({
          namespace: this.namespace,
          source: 'kubelet',
          type: 'probe',
          data: { result: ok ? 'success' : 'failure', message: last.message, probe: type },
        });
        onChange(ok, last);
      },
      onFailure: (result) =>
        this.deps.recorder.podEvent(
          this.current(),
          'Warning',
          'Unhealthy',
          `${probeTypeWords[type]} probe failed: ${result.message}`,
        ),
    });
  }

  /**
   * A liveness or startup probe failed failureThreshold times: the kubelet kills the
   * container as it would at a deletion — preStop, SIGTERM, SIGKILL at the end of the grace
   * period (kuberuntime_container.go killContainer). kuberuntime_manager.go computePodActions:
   * under restartPolicy Never (draincheck's own Pods) nothing will start again, so the whole
   * Pod is killed (KillPod: killContainer with no message or reason — "Stopping container",
   * the Pod's terminationGracePeriodSeconds); otherwise the container alone, "failed liveness
   * probe, will be restarted", with the probe's own terminationGracePeriodSeconds where set
   * (setTerminationGracePeriod). The embedded runtime never restarts it (docs/FIDELITY.md).
   */
  private async killForProbe(type: 'liveness' | 'startup', last: ProbeResult) {
    if (!this.status.is('SyncPod') || this.exit || this.disposed || this.killing) return;
    const pod = this.current();
    const podGrace = pod.spec?.terminationGracePeriodSeconds ?? 30;
    const probe = type === 'liveness' ? this.spec.livenessProbe : this.spec.startupProbe;
    const restart = (pod.spec?.restartPolicy ?? 'Always') !== 'Never';
    const grace = restart ? (probe?.terminationGracePeriodSeconds ?? podGrace) : podGrace;
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'probe-kill',
      data: { probe: type, message: last.message, gracePeriodSeconds: grace },
    });
    await this.kill(
      grace,
      restart ? `Container ${this.spec.name} failed ${type} probe, will be restarted` : undefined,
    );
  }

  private setReady(ready: boolean) {
    // Once the terminated status is written, nothing about readiness changes.
    if (!this.status.is('SyncPod', 'TerminatingPod')) return;
    this.update((pod) => {
      const now = new Date();
      // The Pod is Ready when every container is (ContainersReady): a sidecar that is gone is not.
      pod.status!.conditions = conditions(now, ready && this.sidecarsReady, pod.status!.conditions);
      const cs = this.appStatus(pod);
      cs.ready = ready;
    });
  }

  /**
   * The kubelet noticed the deletion (kubeletDelayMs after the API set deletionTimestamp).
   * `gracePeriodSeconds` is the Pod's deletionGracePeriodSeconds.
   */
  terminate(gracePeriodSeconds: number): void {
    if (!this.transition('terminate')) return;
    // Waiting for the port: no container runs, nothing to signal — the Pod ends at once.
    this.portWaitEnd?.(false);
    // Liveness and startup probes stop at the deletion: their workers set Success and stop
    // (worker.go doProbe, "Pod deletion requested"; kubelet.go SyncTerminatingPod
    // StopLivenessAndStartup). Readiness keeps probing.
    this.liveness?.stop();
    this.startup?.stop();
    // Test-only: a kubelet that stops probing at the deletion leaves `serving` as it was.
    if (this.deps.rulesOff?.has('readiness-during-termination')) this.prober?.stop();
    this.after(this.deps.timing.kubeletDelayMs, () => void this.kill(gracePeriodSeconds));
  }

  /** `message`: the Killing Event's, when not the default "Stopping container server". */
  private async kill(gracePeriodSeconds: number, message?: string) {
    // A start in progress finishes first (or stops early: the deletion is already known).
    await this.starting;
    const container = this.container;
    if (!container) {
      // Never started: the Pod goes straight to a terminal phase and is removed (a native
      // sidecar that did start goes with it).
      for (const sidecar of this.sidecars) sidecar.signal('SIGKILL');
      this.update((pod) => {
        pod.status!.phase = 'Failed';
      });
      this.finishDeletion();
      return;
    }
    const sidecarsRunning = this.sidecars.filter((s) => s.state === 'Running').map((s) => s.name);
    if (this.exit && sidecarsRunning.length === 0) {
      // Already exited: the deletion completes once its terminated status is written.
      if (this.status.is('TerminatedPod', 'RemovingPod')) this.finishDeletion();
      return;
    }
    // A kill for a failed probe is under way: it goes on with its own grace period, and the
    // deletion completes when the container has exited (onExit). (A real kubelet may cut it
    // short to the deletion's grace period.)
    if (this.killing) return;
    this.killing = true;
    // Every running container at once, each in the kubelet's order (killContainersWithSyncResult).
    const running = [...(this.exit ? [] : [this.spec.name]), ...sidecarsRunning];
    await Promise.all(
      this.terminationPlan(running).map((step) =>
        step.name === this.spec.name
          ? this.killApp(container, gracePeriodSeconds, message)
          : this.killSidecar(step, gracePeriodSeconds),
      ),
    );
  }

  /**
   * The kubelet's plan for the running containers (termination-order.ts). Test-only
   * (rulesOff 'sidecar-termination-order'): a kubelet without it — 1.28, or the SidecarContainers
   * gate off — stops every container at once, native sidecars included.
   */
  private terminationPlan(running: string[]): TerminationStep[] {
    const spec: V1PodSpec = this.current().spec ?? { containers: [this.spec] };
    const plan = terminationPlan(spec, running);
    return this.deps.rulesOff?.has('sidecar-termination-order')
      ? plan.map((step) => ({ ...step, waitsFor: [] }))
      : plan;
  }

  /**
   * killContainer for a sidecar: its preStop hook at once, then (a native sidecar) its turn —
   * until the containers it waits for have exited, at most what is left of the grace period —
   * then SIGTERM, and SIGKILL after what is left of the grace (at least 2 s).
   */
  private async killSidecar(step: TerminationStep, gracePeriodSeconds: number) {
    const sidecar = this.sidecars.find((s) => s.name === step.name);
    if (!sidecar || sidecar.exit) return;
    const pod = this.current();
    this.deps.recorder.podEvent(pod, 'Normal', 'Killing', `Stopping container ${sidecar.name}`);
    const container = { container: sidecar.name };
    let preStopMs = 0;
    const preStop = sidecar.spec.lifecycle?.preStop;
    if (preStop && gracePeriodSeconds > 0 && !this.deps.rulesOff?.has('prestop')) {
      const started = Date.now();
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'prestop-started',
        data: { handler: Object.keys(preStop)[0], ...container },
      });
      const result = await runPreStop(this.inPodNetwork(preStop), {
        timeoutMs: gracePeriodSeconds * 1000,
        host: this.endpoint!.ip,
        port: (p) => resolvePort(p, sidecar.spec),
        env: containerEnv(sidecar.spec, pod, this.endpoint!.ip),
        signal: this.hookStop.signal,
      });
      if (this.removed || this.disposed) return;
      preStopMs = Date.now() - started;
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'prestop-finished',
        data: { durationMs: preStopMs, ...result, ...container },
      });
      if (!result.ok)
        this.deps.recorder.podEvent(
          pod,
          'Warning',
          'FailedPreStopHook',
          `PreStopHook failed: ${result.message}`,
        );
    }
    let waitedMs = 0;
    const left = gracePeriodSeconds - Math.floor(preStopMs / 1000);
    if (step.waitsFor.length > 0 && left > 0) {
      const since = Date.now();
      await this.waitForTurn(step.waitsFor, left * 1000);
      waitedMs = Date.now() - since;
      if (this.removed || this.disposed) return;
    }
    if (sidecar.exit) return;
    const grace = sigkillAfterSeconds(gracePeriodSeconds, preStopMs, waitedMs);
    const sent = sidecar.signal('SIGTERM');
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'signal-sent',
      data: { signal: 'SIGTERM', delivered: sent, pid1: this.deps.pid1, ...container },
    });
    const timer = this.after(grace * 1000, () => {
      if (sidecar.exit || this.deps.rulesOff?.has('grace-period-kill')) return;
      const killed = sidecar.signal('SIGKILL');
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'signal-sent',
        data: { signal: 'SIGKILL', delivered: killed, afterSeconds: grace, ...container },
      });
    });
    void sidecar.exited.then(() => this.cancel(timer));
  }

  /** terminationOrdering.waitForTurn: until every named container has exited, or `ms`. */
  private waitForTurn(names: string[], ms: number): Promise<void> {
    const exits = names.map((name) =>
      name === this.spec.name
        ? (this.container?.exited.then(
            () => undefined,
            () => undefined,
          ) ?? Promise.resolve())
        : (this.sidecars.find((s) => s.name === name)?.exited ?? Promise.resolve()),
    );
    return new Promise((resolve) => {
      const timer = this.after(ms, resolve);
      if (!timer) return resolve();
      void Promise.all(exits).then(() => {
        this.cancel(timer);
        resolve();
      });
    });
  }

  /** killContainer for the app: preStop, SIGTERM, SIGKILL at the end of what is left of the grace. */
  private async killApp(container: ContainerProcess, gracePeriodSeconds: number, message?: string) {
    const pod = this.current();
    this.deps.recorder.podEvent(pod, 'Normal', 'Killing', message ?? `Stopping container ${this.spec.name}`);
    // With sidecars, each kubelet record names its container.
    const named = this.sidecars.length > 0 ? { container: this.spec.name } : {};
    let grace = gracePeriodSeconds;
    const preStop = this.spec.lifecycle?.preStop;
    if (preStop && grace > 0 && !this.deps.rulesOff?.has('prestop')) {
      const started = Date.now();
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'prestop-started',
        data: { handler: Object.keys(preStop)[0], ...named },
      });
      this.hookRun = runPreStop(this.inPodNetwork(preStop), {
        timeoutMs: grace * 1000,
        host: this.endpoint!.ip,
        port: (p) =>
          resolvePort(p, this.spec) === this.spec.ports?.[0]?.containerPort
            ? this.endpoint!.port
            : resolvePort(p, this.spec),
        env: containerEnv(this.spec, pod, this.endpoint!.ip),
        signal: this.hookStop.signal,
      });
      const result = await this.hookRun;
      if (this.removed || this.disposed) return; // stopped by a force deletion or shutdown
      const tookMs = Date.now() - started;
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'prestop-finished',
        data: { durationMs: tookMs, ...result, ...named },
      });
      if (!result.ok) {
        this.deps.recorder.podEvent(
          this.current(),
          'Warning',
          'FailedPreStopHook',
          `PreStopHook failed: ${result.message}`,
        );
      }
      grace -= Math.floor(tookMs / 1000);
      if (this.exit) return;
    }
    // kuberuntime always leaves at least 2 s between SIGTERM and SIGKILL.
    grace = Math.max(grace, MINIMUM_GRACE_SECONDS);
    const sent = container.signal('SIGTERM');
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'signal-sent',
      data: { signal: 'SIGTERM', delivered: sent, pid1: container.pid1, ...named },
    });
    this.killTimer = this.after(grace * 1000, () => {
      if (this.exit || this.deps.rulesOff?.has('grace-period-kill')) return;
      const killed = container.signal('SIGKILL');
      this.deps.recorder.emit({
        namespace: this.namespace,
        source: 'kubelet',
        type: 'signal-sent',
        data: { signal: 'SIGKILL', delivered: killed, afterSeconds: grace, ...named },
      });
    });
  }

  private onExit(exit: ContainerExit) {
    this.exit = exit;
    // A force-deleted Pod's object went before its container.
    this.releaseLogIfFinished();
    // Nothing left to kill: a pending SIGKILL must not hold the runtime for the rest of the grace period.
    this.cancel(this.killTimer);
    this.deps.portWait?.containerExited();
    // The log stays open while the container may start again (its output continues in it).
    if (!this.mayWaitForPort(exit)) this.log.close();
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'container-exited',
      data: {
        exitCode: exit.exitCode,
        signal: exit.signal,
        pid1: this.container?.pid1 ?? false,
        ...(this.sidecars.length > 0 ? { container: this.spec.name } : {}),
      },
    });
    // A terminating Pod's container stopped under the kubelet's kill: the kubelet removes the
    // Pod's probe workers as soon as the kill returns (kubelet.go SyncTerminatingPod:
    // killPod, then probeManager.RemovePod), so the dead container is never probed. (The
    // recorded ~v1.24 kubelet kept probing until its PLEG relist; docs/FIDELITY.md.)
    if (this.status.is('TerminatingPod', 'Removed')) {
      this.prober?.stop();
      // killPod then stops the Pod's sandbox, whose CNI teardown takes the Pod's address off
      // the node (kuberuntime_manager.go killPodWithSyncResult: containers, then
      // StopPodSandbox) — before the terminated status is written, not at the object's removal.
      // The sandbox goes once every container has stopped: a native sidecar outlives the app.
      // Without sidecars, as soon as the hook's run settles (no extra turn: the address is off
      // by the time the exit's event has been handled, as the gone-address tests wait for).
      const hook =
        this.sidecars.length > 0
          ? Promise.all([this.hookRun, this.sidecarsExited()])
          : (this.hookRun ?? Promise.resolve());
      void hook.then(
        () => this.addressGone(),
        () => this.addressGone(),
      );
    }
    this.liveness?.stop();
    this.startup?.stop();
    // Otherwise the kubelet notices the exit at its next PLEG relist: until the terminated
    // status is written, the readiness probe keeps probing (and fails against the dead port).
    this.after(this.deps.timing.containerStatusDelayMs, () => {
      this.prober?.stop();
      if (this.mayWaitForPort(exit) && this.deps.portWait!.othersRunning(this)) return this.waitForPort(exit);
      this.log.close();
      // The Pod's containers are all stopped only when its sidecars are too.
      void this.sidecarsExited().then(() => this.writeTerminated(exit));
    });
    // The app exited on its own (restartPolicy Never): with no regular container left, the
    // kubelet kills the Pod — its native sidecars, in their order (kuberuntime_manager.go
    // computePodActions: keepCount == 0 → KillPod).
    if (
      this.status.is('SyncPod') &&
      !this.killing &&
      this.sidecars.some((s) => s.role === 'native-sidecar' && s.state === 'Running') &&
      !this.sidecars.some((s) => s.role === 'regular' && s.state === 'Running')
    )
      void this.kill(this.current().spec?.terminationGracePeriodSeconds ?? 30);
  }

  /**
   * Issue 13: without a network namespace of its own, every Pod shares the host's ports, so a
   * server that ignores HOST and PORT cannot run twice. Like a node whose hostPort is taken (the
   * scheduler's NodePorts filter), one Pod of such a server runs at a time: a Pod whose
   * container died with EADDRINUSE while another Pod's container runs waits for a container of
   * the runtime to exit and starts its own again — at most PORT_WAIT_ATTEMPTS times within
   * PORT_WAIT_MS of the first wait; after that, or at a deletion, it ends as it would have.
   */
  private mayWaitForPort(exit: ContainerExit): boolean {
    return (
      Boolean(this.deps.portWait) &&
      !this.network &&
      this.addressInUse &&
      exit.exitCode !== 0 &&
      this.status.is('SyncPod') &&
      !this.disposed &&
      !this.current().metadata?.deletionTimestamp &&
      this.restarts < PORT_WAIT_ATTEMPTS &&
      (this.portWaitSince === undefined || Date.now() - this.portWaitSince < PORT_WAIT_MS)
    );
  }

  private waitForPort(exit: ContainerExit) {
    this.portWaitSince ??= Date.now();
    const message =
      'the port is taken on the host network, which Pods share here' +
      (this.deps.sharedNetworkReason ? ` (${this.deps.sharedNetworkReason()})` : '') +
      ': waiting for another Pod to end, one Pod of such a server at a time';
    this.deps.recorder.emit({
      namespace: this.namespace,
      source: 'kubelet',
      type: 'port-wait',
      data: { message, attempt: this.restarts + 1 },
    });
    // The server ignores PORT (it died of EADDRINUSE on the port it chose): a remapped port
    // would only point the Service at a port nobody listens on. It will run on the wanted one.
    const wantedPort = this.spec.ports?.[0]?.containerPort ?? 8080;
    if (this.endpoint?.remapped) {
      this.endpoint = { ip: this.endpoint.ip, port: wantedPort, remapped: false };
      delete this.containerEnv?.PORT;
    }
    this.update((pod) => {
      if (pod.metadata?.annotations) delete pod.metadata.annotations[REMAPPED_PORT_ANNOTATION];
      const cs = this.appStatus(pod);
      this.writeStatuses(pod, {
        ...cs,
        ready: false,
        started: false,
        state: { waiting: { reason: 'PortTaken', message } },
        lastState: { terminated: this.terminatedState(exit) },
      });
      pod.status!.conditions = conditions(new Date(), false, pod.status!.conditions);
    });
    const unsubscribe = this.deps.portWait!.onContainerExit(() => end(true));
    const timer = this.after(Math.max(0, this.portWaitSince + PORT_WAIT_MS - Date.now()), () => end(false));
    const end = (restart: boolean) => {
      if (this.portWaitEnd !== end) return;
      this.portWaitEnd = undefined;
      unsubscribe();
      this.cancel(timer);
      if (restart && this.status.is('SyncPod') && !this.disposed) {
        this.restarts += 1;
        this.addressInUse = false;
        this.exit = undefined;
        this.killing = false;
        this.starting = this.runContainer().catch((error: unknown) => {
          this.failToStart('StartError', (error as Error).message);
        });
        return;
      }
      this.log.close();
      this.writeTerminated(exit);
    };
    this.portWaitEnd = end;
  }

  /** The container's terminated state for its exit. */
  private terminatedState(exit: ContainerExit) {
    return {
      exitCode: exit.exitCode,
      ...(exit.signal ? { signal: signalNumber(exit.signal) } : {}),
      reason: exit.exitCode === 0 ? 'Completed' : 'Error',
      ...(exit.exitCode !== 0 && this.addressInUse
        ? { message: addressInUseMessage(this.deps.sharedNetworkReason?.()) }
        : {}),
      startedAt: this.container!.startedAt,
      finishedAt: exit.finishedAt,
      containerID: `draincheck://${this.container!.hostPid}`,
    };
  }

  /** The kubelet writes the container's terminated status; a deleted Pod then goes on to its end. */
  private writeTerminated(exit: ContainerExit) {
    // Force-deleted (Removed): no object left to write to.
    if (!this.transition('statusWritten')) return;
    const deleting = Boolean(this.current().metadata?.deletionTimestamp);
    this.update((pod) => {
      const cs = this.appStatus(pod);
      this.writeStatuses(pod, {
        ...cs,
        ready: false,
        started: false,
        state: { terminated: this.terminatedState(exit) },
      });
      pod.status!.conditions = conditions(new Date(), false, pod.status!.conditions);
      // Since 1.27 the kubelet gives a Pod that will not run again a terminal phase: Failed when
      // a regular container failed (a native sidecar's exit code does not count, kubelet_pods.go
      // getPhase).
      const failed =
        exit.exitCode !== 0 ||
        this.sidecars.some((s) => s.role === 'regular' && s.exit !== undefined && s.exit.exitCode !== 0);
      pod.status!.phase = failed ? 'Failed' : 'Succeeded';
    });
    if (deleting) this.finishDeletion();
  }

  /** The kubelet's final delete: grace period 0, then the object is gone. */
  private finishDeletion() {
    if (!this.transition('finalDelete')) return;
    this.after(this.deps.timing.finalDeleteDelayMs, () => {
      const updated = this.update((pod) => {
        const grace = pod.metadata!.deletionGracePeriodSeconds ?? 0;
        const at = pod.metadata!.deletionTimestamp ? new Date(pod.metadata!.deletionTimestamp) : new Date();
        // The API moves deletionTimestamp back by the old grace period (now + 0).
        pod.metadata!.deletionTimestamp = new Date(at.getTime() - grace * 1000);
        pod.metadata!.deletionGracePeriodSeconds = 0;
      });
      if (!updated) return;
      this.after(Math.max(1, Math.round(this.deps.timing.finalDeleteDelayMs / 2)), () =>
        this.removeObject('remove'),
      );
    });
  }

  private removeObject(event: 'remove' | 'forceDelete') {
    if (!this.transition(event)) return;
    this.deps.store.remove('pods', this.namespace, this.name);
    this.addressGone();
    this.network?.release();
    this.releaseLogIfFinished();
  }

  /**
   * The Pod's loopback address is off the node (its sandbox stopped, or the Pod removed): the
   * runtime gives it back once nothing can route to it any more (gone-addresses.ts). Once.
   */
  private addressGone() {
    if (!this.endpoint || !this.allocator || this.addressOff) return;
    this.addressOff = true;
    // With a sidecar in front, the port new connections come to is the sidecar's: the one the
    // Service targets (named `http` in draincheck's manifests), not the app's.
    const front =
      this.sidecars.length > 0
        ? this.sidecars.flatMap((s) => s.spec.ports ?? []).find((p) => p.name === 'http')?.containerPort
        : undefined;
    const gone = front === undefined ? this.endpoint : { ...this.endpoint, port: front };
    if (this.deps.addressGone) this.deps.addressGone(gone);
    else this.allocator.release(this.endpoint.ip);
  }

  /** The Pod object and its container are both gone: so is its log (LogBuffer.release). */
  private releaseLogIfFinished() {
    if (!this.finished) return;
    this.log.release();
    for (const sidecar of this.sidecars) sidecar.log.release();
  }

  /** The Pod's network namespace (for `ss` inside it), where it has one. */
  get netns(): string | undefined {
    return this.network?.netns;
  }

  /** An exec probe or hook runs "in the container": in the Pod's network namespace, where it has one. */
  private inPodNetwork<T extends V1Probe | V1LifecycleHandler>(handler: T): T {
    const command = handler.exec?.command;
    if (!this.network || !command?.length) return handler;
    return { ...handler, exec: { command: this.network.enter(command) } };
  }

  /** Force deletion (grace 0): the object is removed at once and the container killed now. */
  forceDelete(): void {
    this.hookStop.abort();
    this.removeObject('forceDelete');
    this.portWaitEnd?.(false);
    this.prober?.stop();
    this.liveness?.stop();
    this.startup?.stop();
    this.container?.signal('SIGKILL');
    for (const sidecar of this.sidecars) sidecar.signal('SIGKILL');
  }

  private failToStart(reason: string, message: string) {
    if (this.removed || this.disposed) return;
    this.deps.recorder.podEvent(this.current(), 'Warning', 'Failed', `Error: ${message}`);
    this.update((pod) => {
      this.writeStatuses(pod, status(this.spec, { waiting: { reason, message } }, false));
    });
  }

  /** Stops everything at once (runtime shutdown). */
  dispose(): void {
    this.shutdown.abort();
    this.portWaitEnd?.(false);
    this.hookStop.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.prober?.stop();
    this.liveness?.stop();
    this.startup?.stop();
    this.container?.killNow();
    for (const sidecar of this.sidecars) {
      sidecar.killNow();
      sidecar.abandon();
      sidecar.log.close();
    }
    this.network?.release();
    this.log.close();
  }

  /** A container process of this Pod runs now. */
  get runsContainer(): boolean {
    return (
      !this.removed &&
      ((this.container !== undefined && this.exit === undefined) ||
        this.sidecars.some((s) => s.state === 'Running'))
    );
  }

  /** The Pod object is gone and no container process is left (or none was ever started). */
  get finished(): boolean {
    return (
      this.removed &&
      (this.exit !== undefined || this.container === undefined) &&
      this.sidecars.every((s) => s.state !== 'Running')
    );
  }

  /** Resolves once a start in progress has settled and the container process (if any) is gone. */
  async stopped(): Promise<void> {
    await this.starting;
    await this.hookRun;
    await this.container?.exited.then(
      () => undefined,
      () => undefined, // a process that failed to spawn has nothing to wait for
    );
    await this.sidecarsExited();
  }
}

/** How Node, Go, Python and most servers word a port that is taken. */
const ADDRESS_IN_USE = /\bEADDRINUSE\b|address already in use/i;

/**
 * The terminated state's message of a container that could not listen because the port is
 * taken on the host network it shares (a runtime's own words; Kubernetes' would be the
 * termination message file, or the log's tail with FallbackToLogsOnError).
 */
export function addressInUseMessage(reason: string | undefined): string {
  return (
    'listen EADDRINUSE: the port is taken on the host network, which Pods share here' +
    (reason ? ` (${reason})` : '') +
    ' — make the server listen on $HOST (the Pod IP), not 0.0.0.0; on Linux as root each Pod gets a network namespace of its own (--pod-network isolated)'
  );
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 0;
}

function status(
  spec: V1Container,
  state: V1ContainerStatus['state'],
  ready: boolean,
  started = false,
): V1ContainerStatus {
  return { name: spec.name, image: spec.image ?? '', imageID: '', ready, started, restartCount: 0, state };
}

function conditions(now: Date, ready: boolean, previous: V1PodCondition[] = []): V1PodCondition[] {
  const prior = (type: string) => previous.find((c) => c.type === type);
  const make = (type: string, value: boolean, reason?: string): V1PodCondition => {
    const before = prior(type);
    const statusText = value ? 'True' : 'False';
    return {
      type,
      status: statusText,
      lastTransitionTime: before && before.status === statusText ? before.lastTransitionTime : now,
      ...(reason && !value ? { reason } : {}),
    };
  };
  return [
    make('PodReadyToStartContainers', true),
    make('Initialized', true),
    make('Ready', ready, 'ContainersNotReady'),
    make('ContainersReady', ready, 'ContainersNotReady'),
    make('PodScheduled', true),
  ];
}
