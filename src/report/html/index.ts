// The HTML report: one self-contained page comparing runs of draincheck.run/v1, each with a
// timeline of swim lanes on a shared time axis. `draincheck report --html` and `lab` call
// renderHtmlReport; the timeline model is exported for tests and other renderers.
import type { RunDocument } from '../../experiment/run-document.js';
import { renderPage, type RenderHtmlReportOptions } from './page.js';

export type { RenderHtmlReportOptions } from './page.js';
export { buildTimeline, buildTimelines } from './timeline.js';
export type * from './types.js';

/** The whole report as one HTML document (UTF-8 text): write it to a file and open it anywhere. */
export function renderHtmlReport(docs: RunDocument[], options?: RenderHtmlReportOptions): string {
  return renderPage(docs, options);
}
