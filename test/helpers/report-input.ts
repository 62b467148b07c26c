// The run documents the HTML report's browser test renders. One function, so the input can
// switch from the sample runs to a real `draincheck lab` run on the embedded runtime without
// touching the test.
import type { RunDocument } from '../../src/experiment/run-document.js';
import { sampleRuns } from './sample-runs.js';

export function loadReportInput(): Promise<RunDocument[]> {
  return Promise.resolve(sampleRuns());
}
