// A gone Pod's loopback address, as a torn-down Pod sandbox on a node: once the kubelet has
// killed the Pod, its sandbox and network are gone (kuberuntime_manager.go killPodWithSyncResult:
// containers, then StopPodSandbox, whose CNI DEL removes the Pod's interface), while kube-proxy
// may still route new connections there for its sync lag. A SYN sent there gets no answer — no
// interface holds the address — and the client waits for its connect timeout (issue 14: 8–42
// `connect-timeout`s per `exit` rollout on a real cluster). On one machine, 127.0.0.N would
// answer such a SYN with a RST at once (nothing listens there): so while the Service rules still
// name a gone Pod's address, new connections they send there are dropped, and the address stays
// leased — no other Pod may get it while connections to it are being dropped.
//
// The drop outlasts the rules: a SYN that was sent there has a conntrack entry naming the address
// (SYN_SENT), and its retransmissions — and a new SYN from the same client port — follow that
// entry whatever the rules say by then, as on a node, until the entry expires
// (nf_conntrack_tcp_timeout_syn_sent, 120 s by default). So once no Service's rules name the
// address (applied or pending), it lingers, still dropped, for that long; then the drop goes and
// the address is given back. The runtime's end gives everything back at once.
//
// Pods with a network namespace of their own have a blackhole route for that (pod-network.ts).
import type { Endpoint } from './addresses.js';

/** A gone Pod's address and port. */
export type GoneAddress = Pick<Endpoint, 'ip' | 'port'>;

/** What the kernel data plane offers (nftables.ts NftablesTable); absent with the userspace proxy. */
export interface GoneDropper {
  dropNew(address: GoneAddress): Promise<void>;
  stopDropping(address: GoneAddress): Promise<void>;
}

export interface GoneAddressesDeps {
  /** Whether any Service's rules name `ip` now or will at their pending sync. */
  named(ip: string): boolean;
  /** The kernel's rules, if the runtime has any (created with the first Service). */
  kernel(): GoneDropper | undefined;
  /** Gives the address back (AddressAllocator.release). */
  release(ip: string): void;
  /** How long a forgotten address stays dropped (default: the SYN_SENT conntrack timeout). */
  lingerMs?: number;
}

/** The kernel's default nf_conntrack_tcp_timeout_syn_sent. */
const SYN_SENT_TIMEOUT_MS = 120_000;

/**
 * A retired address: `named` while some Service's rules may send new connections there,
 * `lingering` once none do (conntrack entries still may, see above).
 */
type Retired =
  | { address: GoneAddress; state: 'named' }
  | { address: GoneAddress; state: 'lingering'; timer: NodeJS.Timeout };

const key = (a: GoneAddress) => `${a.ip}:${a.port}`;

/** The gone Pods' addresses of one runtime that the Service rules or conntrack may still name. */
export class GoneAddresses {
  private readonly retired = new Map<string, Retired>();
  /** Kernel updates one at a time, in order: a drop is never removed before it was added. */
  private queue: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(private readonly deps: GoneAddressesDeps) {}

  /** Whether a new connection to `target` must go unanswered (the userspace proxy asks). */
  has(target: GoneAddress): boolean {
    return this.retired.has(key(target));
  }

  /** The Pod with this address is gone: retired while the rules name it, else given back now. */
  podGone(address: GoneAddress): Promise<void> {
    if (this.disposed) return this.queue;
    if (!this.deps.named(address.ip)) {
      this.deps.release(address.ip);
      return this.queue;
    }
    this.retired.set(key(address), { address, state: 'named' });
    return this.enqueue(() => this.deps.kernel()?.dropNew(address));
  }

  /** Some Service's rules changed (or the Service went): what no rules name any more lingers. */
  rulesChanged(): Promise<void> {
    for (const [k, retired] of this.retired) {
      if (retired.state !== 'named' || this.deps.named(retired.address.ip)) continue;
      const timer = setTimeout(() => this.forget(k), this.deps.lingerMs ?? SYN_SENT_TIMEOUT_MS);
      // Lingering never keeps the runtime alive; its end gives everything back anyway.
      timer.unref();
      this.retired.set(k, { address: retired.address, state: 'lingering', timer });
    }
    return this.queue;
  }

  /** Settles once every kernel update so far is done (tests, dispose). */
  settled(): Promise<void> {
    return this.queue;
  }

  /** The runtime ends (its table and leases go with it): no more updates. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const retired of this.retired.values())
      if (retired.state === 'lingering') clearTimeout(retired.timer);
    this.retired.clear();
    await this.queue;
  }

  private forget(k: string) {
    const retired = this.retired.get(k);
    if (!retired || this.disposed) return;
    this.retired.delete(k);
    // The drop first, then the lease: the address is never another Pod's while dropped.
    void this.enqueue(async () => {
      await this.deps.kernel()?.stopDropping(retired.address);
      if (!this.disposed) this.deps.release(retired.address.ip);
    });
  }

  private enqueue(step: () => Promise<void> | undefined): Promise<void> {
    // A failed update is not fatal: the rules' table goes with the runtime (or its next collection).
    this.queue = this.queue.then(step).catch(() => undefined);
    return this.queue;
  }
}
