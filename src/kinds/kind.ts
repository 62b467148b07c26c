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
 * which kind lacks it).
 */
export type Renderers<Doc> = { json(doc: Doc): unknown } & {
  [F in Exclude<ReportFormat, 'json'>]: (docs: Doc[], context: RenderContext) => string;
};

/**
 * One experiment kind. `plan`, `run` and `conclude` keep their own signatures (a kind's inputs
 * are its own); the CLI command of the kind calls them. `documentSchema` validates a document
 * read back before any renderer sees it.
 */
export interface ExperimentKind<Doc extends { schema: string }> {
  /** The `schema` string every document of this kind carries: the kind and its version. */
  schema: Doc['schema'];
  /** What one document is called in messages (`run`, `rollout`). */
  noun: string;
  documentSchema: z.ZodType<Doc>;
  plan: (...args: never[]) => unknown;
  run: (...args: never[]) => Promise<Doc>;
  conclude: (...args: never[]) => unknown;
  renderers: Renderers<Doc>;
}
