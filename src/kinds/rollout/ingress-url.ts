// `rollout --platform kube --ingress-url`: the evidence through the user's own ingress, graded
// for what it is. There is no proxy log to read (the ingress is the user's), so who answered a
// 5xx is read from the answer itself: every lab server response carries its Pod's UID
// (docs/LAB-CONTRACT.md), so a 502/503/504 without one was answered by something in front of the
// Pods — the ingress — and never counts as a Pod's http-error. Which Pod such a request went to
// is unknown, unless a Pod's journal shows it accepted the request id (the join's fate).
import type { LoadRecord, ServerFate } from '../../probe/load/record.js';

/** The statuses an ingress answers for its upstream (RFC 9110 §15.6.3–5: bad gateway, unavailable, timeout). */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

/**
 * Who answered a 5xx, from the response alone (the record as the load wrote it, before the
 * join fills a Pod from the journal): `pod` — its UID is in the body; `ingress` — a 502/503/504
 * with no Pod's UID; null — not a 5xx, or another 5xx without a UID (not a gateway's status:
 * not presumed the ingress's).
 */
export function answeredBy(r: Pick<LoadRecord, 'status' | 'podUid' | 'failure'>): 'pod' | 'ingress' | null {
  if (r.failure !== 'http-5xx' || r.status === null) return null;
  if (r.podUid !== null && r.podUid !== '') return 'pod';
  return GATEWAY_STATUSES.has(r.status) ? 'ingress' : null;
}

/** The ids of the ingress's answers held for the journal's verdict at most (~100 bytes each). */
const HELD_MAX = 100_000;

/** A Pod's journal had the request: the Pod accepted it (whatever became of the work). */
const podHadIt = (fate: ServerFate | undefined): boolean =>
  fate === 'finished' || fate === 'aborted' || fate === 'cut' || fate === 'accepted';

export interface IngressAnswers {
  /** 5xx the ingress answered (no Pod's UID in them), by status. */
  byIngress: Record<string, number>;
  /** 5xx a Pod answered (its UID in them). */
  byPod: number;
  /** Of the ingress's answers, those a Pod's journal shows it had accepted (the Pod cut or failed it). */
  acceptedByPod: number;
  /** Of the ingress's answers, those beyond HELD_MAX whose journal was not looked at. */
  unchecked: number;
}

/** Counts the answers of a run through the user's ingress: raw records first, then joined ones. */
export class IngressAnswerTally {
  private readonly byIngress: Record<string, number> = {};
  private byPod = 0;
  private acceptedByPod = 0;
  private unchecked = 0;
  private readonly held = new Set<string>();

  /** A record as the load wrote it (its podUid is the response's own). */
  raw(r: LoadRecord): void {
    // An attempt the client sent again is not a request's outcome (--retry).
    if (r.retried === true) return;
    const who = answeredBy(r);
    if (who === 'pod') this.byPod += 1;
    else if (who === 'ingress') {
      const key = String(r.status);
      this.byIngress[key] = (this.byIngress[key] ?? 0) + 1;
      if (this.held.size < HELD_MAX) this.held.add(r.id);
      else this.unchecked += 1;
    }
  }

  /** The same record after the join: whether a Pod's journal had it. */
  joined(r: LoadRecord): void {
    if (!this.held.delete(r.id)) return;
    if (podHadIt(r.fate)) this.acceptedByPod += 1;
  }

  summary(): IngressAnswers {
    return {
      byIngress: this.byIngress,
      byPod: this.byPod,
      acceptedByPod: this.acceptedByPod,
      unchecked: this.unchecked,
    };
  }
}

/** The total of a status count. */
export const answersCount = (byStatus: Record<string, number>): number =>
  Object.values(byStatus).reduce((a, n) => a + n, 0);
