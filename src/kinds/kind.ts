// What an experiment kind is: the steps that produce its document (plan, run, conclude), the
// zod schema of that document, and one renderer per report format. The document's `schema`
// string (`draincheck.run/v1`) is its kind: `draincheck report` reads it first and dispatches
// (registry.ts). A kind is one folder or file here plus one line in registry.ts.
import type { z } from 'zod';
import type { Style } from '../report/style.js';

/** The report formats, in one place: `--format` of run, lab and report (src/cli/format.ts). */
export const reportFormats = ['text', 'json', 'html'] as const;
export type ReportFormat = (typeof reportFormats)[number];

/** What a renderer is told besides the documents. */
export interface RenderContext {
  style: Style;
  /** The HTML page's title and heading. */
  title: string;
  /** Wall clock (ISO) the page says it was made at. */
  generatedAt: string;
}

/**
 * One renderer per report format: `json` gives one document's JSON value (`--format json`
 * prints them as one array); every other format renders some documents of the kind as one
 * text — `text` the terminal report (untrusted text escaped), `html` a self-contained page. A
 * format added to reportFormats is thus a renderer every kind must have (the compiler says
 * which kind lacks it). A renderer may load its modules when first called (a promise): a
 * command that runs an experiment then need not load its report before the run starts.
 */
export type Renderers<Doc> = { json(doc: Doc): unknown } & {
  [F in Exclude<ReportFormat, 'json'>]: (docs: Doc[], context: RenderContext) => string | Promise<string>;
};

/**
 * One experiment kind, its steps typed: `plan` turns the kind's own inputs into its Plan, `run`
 * carries a Plan out into a Document (the CLI command of the kind calls both), `conclude` reads
 * the kind's facts into its conclusion (called by `run`: the run kind's fields, the rollout's
 * sentence) and the renderers show documents. `documentSchema` validates a document read back
 * before any renderer sees it.
 */
export interface ExperimentKind<
  Plan,
  Doc extends { schema: string },
  PlanInput extends unknown[] = never,
  RunInput extends { plan: Plan } = never,
  Facts = never,
  Conclusion = unknown,
> {
  /** The `schema` string every document of this kind carries: the kind and its version. */
  schema: Doc['schema'];
  /** What one document is called in messages (`run`, `rollout`). */
  noun: string;
  documentSchema: z.ZodType<Doc>;
  plan: (...input: PlanInput) => Plan;
  run: (input: RunInput) => Promise<Doc>;
  conclude: (facts: Facts) => Conclusion;
  renderers: Renderers<Doc>;
}

/** Any kind of documents `Doc`, its steps' types left open (the registry's view). */
export type AnyKind<Doc extends { schema: string }> = ExperimentKind<unknown, Doc>;
