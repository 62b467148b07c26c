// The timeline model of one run: what the SVG draws, computed from the run document alone
// (timeline.ts) and kept free of markup so it can be tested without parsing SVG.
import type { RunDocument, RunEvent } from '../../experiment/run-document.js';

/** The swim lanes, top to bottom. `runner` holds the protocol's phases and failures. */
export const laneNames = ['runner', 'client', 'server', 'endpoint', 'pod'] as const;
export type LaneName = (typeof laneNames)[number];

/** How a mark or interval reads at a glance; always paired with a text label. */
export type Tone = 'neutral' | 'good' | 'bad' | 'warn' | 'key';

/** One event drawn as a point on the time axis, with the raw event for its tooltip. */
export interface TimelineMark {
  eventId: string;
  at: number;
  /** Short text next to the mark; empty when the mark needs none (e.g. an unchanged slice). */
  label: string;
  tone: Tone;
  /** Higher labels are placed first when labels compete for room. */
  priority: number;
  /** The verdict rests on this event. */
  evidence: boolean;
  event: RunEvent;
}

/** A stretch of time in one state, e.g. `serving=true` from one slice event to the next. */
export interface TimelineInterval {
  from: number;
  to: number;
  /** A CSS-safe state name: `true`, `false`, `unknown`, `absent`, an outcome, a phase... */
  state: string;
  /** The text written on the interval (never colour alone). */
  label: string;
  /** The event where this state began, if one did. */
  eventId: string | null;
}

export type TimelineRow =
  | { kind: 'band'; name: string; intervals: TimelineInterval[] }
  | { kind: 'marks'; name: string; marks: TimelineMark[] };

export interface TimelineLane {
  name: LaneName;
  title: string;
  /** Where the lane's events come from, e.g. `source: endpointslice, proxy`. */
  sources: string;
  rows: TimelineRow[];
  /** Said in the lane when it has nothing to show, e.g. "not observed". */
  note: string | null;
}

/** The first slice event that showed this Pod's endpoint terminating. */
export interface FirstTerminating {
  at: number;
  eventId: string | null;
  conditions: { ready: boolean | null; serving: boolean | null; terminating: boolean | null };
  text: string;
}

/** The container's exit as the run document concluded it. */
export interface ExitMark {
  at: number;
  code: number | null;
  reason: string | null;
  signal: number | string | null;
  /** The Pod event that first carried the terminated state (or the journal's exit line), when it is in the events. */
  eventId: string | null;
  text: string;
  /** `journal`: the kubelet reported no terminated state; the code is the server's own journal line. */
  source: 'kubelet' | 'journal';
}

export interface RunTimeline {
  /** Prefix of every element id of this run (`r1`, `r2`...): unique within one page. */
  key: string;
  doc: RunDocument;
  /** The last moment this run observed anything (ms since it began). */
  end: number;
  lanes: TimelineLane[];
  deletionAt: number | null;
  firstTerminating: FirstTerminating | null;
  exit: ExitMark | null;
  /** The run in words, for screen readers and print. */
  summary: string;
}

/** One ms → x mapping shared by every run of a page, so the timelines line up. */
export interface TimeScale {
  /** The axis' first and last ms (axis ms = ms since the run began − `origin`). */
  domain: [number, number];
  /** x of the plot's left and right edge, in SVG user units. */
  range: [number, number];
  /** Where axis 0 falls, in ms since the run began: 0, or the run's DELETE for the close-up. */
  origin: number;
  /** x of a moment given in ms since the run began (clamped to the plot). */
  x(at: number): number;
  /** Whether a moment (ms since the run began) lies on the axis. */
  contains(at: number): boolean;
  /** Axis ms where ticks go. */
  ticks: number[];
}
