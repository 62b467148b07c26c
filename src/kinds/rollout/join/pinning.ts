// Connection pinning (issue 26.3): a Kubernetes Service balances connections, not requests, so
// a client that holds a few long-lived connections (HTTP/2, gRPC) keeps sending every request
// to the Pod each connection was opened to, until the server ends the connection (GOAWAY) or
// the client does. From the joined records alone: per client connection — an h2c slot (it
// keeps its number across the sessions a GOAWAY or a lost connection replaced), a gRPC channel
// (the same: one connection at a time, a new one after each GOAWAY or loss), or an HTTP/1.1
// connection (one TCP connection, one Pod for its life) — which Pods answered it and when, when
// it moved, how long it stayed on an old Pod after that Pod turned terminating; and, after the
// rollout completed, how many requests still went to old Pods and the new Pods' share per second.
// A request counts where its own evidence (its completion body's UID, or its Pod's journal)
// names the Pod; a Pod carried over from the connection (podUidFrom) is not counted.
import { RECONNECT_WAIT_MS_MAX, type LoadRecord } from '../../../probe/load/record.js';
import type { PodLifecycle, RolloutDocument } from '../document.js';

/** Client connections followed at most (an HTTP/1.1 pool is at most 10,000). */
export const PINNING_CONNECTIONS_MAX = 10_000;
/** Pods remembered per connection at most (a connection moves a few times in a rollout). */
const PODS_PER_CONNECTION_MAX = 16;
/** Connections listed in the document at most (the figures count them all). */
export const PINNING_LISTED_MAX = 64;
/** Seconds after the rollout completed whose new-Pod share is kept. */
export const SHARE_SECONDS_MAX = 600;

type Revision = 'old' | 'new' | 'unknown';
interface PodSpan {
  uid: string;
  firstMs: number;
  lastMs: number;
  requests: number;
}
interface Connection {
  name: string;
  /** Sessions (conn numbers) the slot had. */
  sessions: Set<number>;
  pods: Map<string, PodSpan>;
  requests: number;
  toOldAfterComplete: number;
}

export type PinningSection = NonNullable<RolloutDocument['pinning']>;

/** The generator's id prefix of a work id (`drain-L0-12.2` → `drain-L0-`). */
export function idPrefixOf(id: string): string {
  return id.replace(/\d+(?:\.\d+)?$/, '');
}

export class PinningTally {
  private readonly connections = new Map<string, Connection>();
  private readonly revision = new Map<string, Revision>();
  private readonly terminatingAt = new Map<string, number>();
  /** Connections not followed (past the bound). */
  private overflow = 0;
  private toOldAfterComplete = 0;
  /** The latest send (ms on the records' clock) of a request an old Pod took after the rollout completed. */
  private lastToOldMs: number | null = null;
  private answeredAfterComplete = 0;
  private readonly perSecond: Array<{ answered: number; toNew: number }> = [];
  private unit: 'slot' | 'connection' = 'connection';
  /** h2c: requests the server refused (GOAWAY or REFUSED_STREAM) and the client sent again (records' `refused`), and how often. */
  private refusedRequests = 0;
  private refusedTimes = 0;
  /** WebSocket: messages that waited in the client's queue for a reconnect (records' `reconnectWaitMs`). */
  private waitedMessages = 0;
  private waitedTotalMs = 0;
  private waitedMaxMs = 0;

  constructor(
    pods: readonly PodLifecycle[],
    /** When the Deployment was complete (ms on the records' clock); null: it never was. */
    private readonly completeAtMs: number | null,
  ) {
    for (const p of pods) {
      this.revision.set(p.uid, p.revision === 'old' || p.revision === 'new' ? p.revision : 'unknown');
      if (p.terminatingAtMs !== null) this.terminatingAt.set(p.uid, p.terminatingAtMs);
    }
  }

  add(r: LoadRecord): void {
    if (r.refused !== undefined && Number.isSafeInteger(r.refused) && r.refused > 0) {
      this.refusedRequests += 1;
      this.refusedTimes += Math.min(r.refused, 64);
    }
    // Held to the record file's bound; a record that says it waited counts once.
    const waited = r.reconnectWaitMs;
    if (
      waited !== undefined &&
      Number.isSafeInteger(waited) &&
      waited >= 0 &&
      waited <= RECONNECT_WAIT_MS_MAX
    ) {
      this.waitedMessages += 1;
      this.waitedTotalMs += waited;
      this.waitedMaxMs = Math.max(this.waitedMaxMs, waited);
    }
    if (r.podUid === null || r.podUidFrom === 'connection' || r.conn === null) return;
    const sentMs = (r.sentUs ?? r.intendedUs) / 1000;
    const revision = this.revision.get(r.podUid) ?? 'unknown';
    if (this.completeAtMs !== null && sentMs >= this.completeAtMs && revision !== 'unknown') {
      this.answeredAfterComplete += 1;
      if (revision === 'old') {
        this.toOldAfterComplete += 1;
        this.lastToOldMs = Math.max(this.lastToOldMs ?? sentMs, sentMs);
      }
      const second = Math.floor((sentMs - this.completeAtMs) / 1000);
      if (second < SHARE_SECONDS_MAX) {
        while (this.perSecond.length <= second) this.perSecond.push({ answered: 0, toNew: 0 });
        const bin = this.perSecond[second]!;
        bin.answered += 1;
        if (revision === 'new') bin.toNew += 1;
      }
    }
    if (r.slot !== undefined) this.unit = 'slot';
    const prefix = idPrefixOf(r.id);
    const name = `${r.slot !== undefined ? `slot ${r.slot}` : `connection ${r.conn}`}${prefix ? ` of ${prefix}` : ''}`;
    let c = this.connections.get(name);
    if (!c) {
      if (this.connections.size >= PINNING_CONNECTIONS_MAX) {
        this.overflow += 1;
        return;
      }
      c = { name, sessions: new Set(), pods: new Map(), requests: 0, toOldAfterComplete: 0 };
      this.connections.set(name, c);
    }
    c.requests += 1;
    if (c.sessions.size < 1024) c.sessions.add(r.conn);
    if (this.completeAtMs !== null && sentMs >= this.completeAtMs && revision === 'old')
      c.toOldAfterComplete += 1;
    const span = c.pods.get(r.podUid);
    if (span) {
      span.firstMs = Math.min(span.firstMs, sentMs);
      span.lastMs = Math.max(span.lastMs, sentMs);
      span.requests += 1;
    } else if (c.pods.size < PODS_PER_CONNECTION_MAX)
      c.pods.set(r.podUid, { uid: r.podUid, firstMs: sentMs, lastMs: sentMs, requests: 1 });
  }

  summary(): PinningSection {
    const round = (v: number) => Math.round(v * 10) / 10;
    let movedOff = 0;
    let stillOnOld = 0;
    let longestStay: number | null = null;
    const all = [...this.connections.values()].map((c) => {
      const pods = [...c.pods.values()].sort((a, b) => a.firstMs - b.firstMs);
      const rev = (uid: string) => this.revision.get(uid) ?? 'unknown';
      const old = pods.filter((p) => rev(p.uid) === 'old');
      const lastOldMs = old.length > 0 ? Math.max(...old.map((p) => p.lastMs)) : null;
      // The Pod that answered its latest request.
      const last = pods.reduce<PodSpan | null>((a, p) => (a === null || p.lastMs > a.lastMs ? p : a), null);
      const onOldAtEnd = last !== null && rev(last.uid) === 'old';
      const firstNewAfterOld =
        lastOldMs === null
          ? null
          : (pods
              .filter((p) => rev(p.uid) === 'new' && p.firstMs > lastOldMs)
              .map((p) => p.firstMs)
              .sort((a, b) => a - b)[0] ?? null);
      if (old.length > 0 && !onOldAtEnd && firstNewAfterOld !== null) movedOff += 1;
      if (onOldAtEnd) stillOnOld += 1;
      // How long it kept sending to each old Pod after that Pod turned terminating (the longest).
      let stay: number | null = null;
      for (const p of old) {
        const t = this.terminatingAt.get(p.uid);
        if (t === undefined) continue;
        const s = Math.max(0, p.lastMs - t);
        stay = stay === null ? s : Math.max(stay, s);
      }
      if (stay !== null) longestStay = longestStay === null ? stay : Math.max(longestStay, stay);
      return {
        connection: c.name,
        sessions: c.sessions.size,
        requests: c.requests,
        pods: pods.map((p) => ({
          uid: p.uid,
          revision: rev(p.uid),
          firstMs: round(p.firstMs),
          lastMs: round(p.lastMs),
          requests: p.requests,
        })),
        movedAtMs: pods.length > 1 ? round(pods[1]!.firstMs) : null,
        offOldAtMs: onOldAtEnd || firstNewAfterOld === null ? null : round(firstNewAfterOld),
        stayedAfterTerminatingMs: stay === null ? null : round(stay),
        toOldAfterComplete: c.toOldAfterComplete,
      };
    });
    // The ones that say most first: still on an old Pod, then the longest stays.
    all.sort(
      (a, b) =>
        b.toOldAfterComplete - a.toOldAfterComplete ||
        (b.stayedAfterTerminatingMs ?? -1) - (a.stayedAfterTerminatingMs ?? -1) ||
        a.connection.localeCompare(b.connection),
    );
    const share = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 1000) / 1000);
    const toNewAfter = this.perSecond.reduce((a, b) => a + b.toNew, 0);
    return {
      unit: this.unit,
      connections: this.connections.size + (this.overflow > 0 ? 1 : 0),
      unfollowedRequests: this.overflow,
      onOldPods: all.filter((c) => c.pods.some((p) => p.revision === 'old')).length,
      movedOff,
      stillOnOld,
      requestsToOldAfterComplete: this.toOldAfterComplete,
      lastToOldAfterCompleteMs:
        this.lastToOldMs === null || this.completeAtMs === null
          ? null
          : round(this.lastToOldMs - this.completeAtMs),
      answeredAfterComplete: this.answeredAfterComplete,
      newShareAfter: share(
        toNewAfter,
        this.perSecond.reduce((a, b) => a + b.answered, 0),
      ),
      newSharePerSecond: this.perSecond.map((b) => ({
        answered: b.answered,
        share: share(b.toNew, b.answered),
      })),
      longestStayAfterTerminatingMs: longestStay === null ? null : round(longestStay),
      refusedResent: { requests: this.refusedRequests, times: this.refusedTimes },
      reconnectWait: {
        messages: this.waitedMessages,
        meanMs: this.waitedMessages === 0 ? null : Math.round(this.waitedTotalMs / this.waitedMessages),
        maxMs: this.waitedMessages === 0 ? null : this.waitedMaxMs,
      },
      listed: all.slice(0, PINNING_LISTED_MAX),
    };
  }
}

/** Whether the report says the pinning: always over HTTP/2, gRPC and WebSocket, for HTTP/1.1 when old Pods got requests after the rollout. */
export function pinningShown(
  p: PinningSection | undefined,
  protocol: string | undefined,
): p is PinningSection {
  return (
    p !== undefined &&
    (protocol === 'h2c' || protocol === 'grpc' || protocol === 'ws' || p.requestsToOldAfterComplete > 0)
  );
}

/** The pinning in one line (the text report and the page's fact; unescaped). */
export function pinningWords(p: PinningSection, protocol?: string): string {
  const unit =
    p.unit === 'connection'
      ? 'connections'
      : protocol === 'grpc'
        ? 'gRPC channels'
        : protocol === 'ws'
          ? 'WebSocket slots'
          : 'HTTP/2 connections (slots)';
  const parts = [
    `${p.connections} ${unit}, ${p.onOldPods} on old Pods, ${p.movedOff} moved off them, ${p.stillOnOld} still on old Pods at the end`,
    `${p.requestsToOldAfterComplete} requests to old Pods after the rollout completed (of ${p.answeredAfterComplete} with a known Pod${p.newShareAfter === null ? '' : `; the new Pods’ share ${Math.round(p.newShareAfter * 1000) / 10} %`})`,
  ];
  if (p.lastToOldAfterCompleteMs !== undefined && p.lastToOldAfterCompleteMs !== null)
    parts.push(
      `the last request to an old Pod was sent ${p.lastToOldAfterCompleteMs} ms after the rollout completed`,
    );
  if (p.longestStayAfterTerminatingMs !== null)
    parts.push(`longest on an old Pod after it turned terminating: ${p.longestStayAfterTerminatingMs} ms`);
  if (p.unit === 'slot' && protocol !== 'grpc' && protocol !== 'ws' && p.refusedResent)
    parts.push(
      `${p.refusedResent.requests} request${p.refusedResent.requests === 1 ? '' : 's'} the server refused (GOAWAY or REFUSED_STREAM: never processed) sent again, as Go’s Transport does (${p.refusedResent.times} refusal${p.refusedResent.times === 1 ? '' : 's'})`,
    );
  const w = p.reconnectWait;
  if (protocol === 'ws' && w && w.messages > 0)
    parts.push(
      `${w.messages} message${w.messages === 1 ? '' : 's'} waited in the client’s queue for a reconnect (mean ${w.meanMs} ms, at most ${w.maxMs} ms)`,
    );
  return `connection pinning: ${parts.join('; ')}`;
}
