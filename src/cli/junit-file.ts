// `--junit FILE` on `rollout` and `lab`: its place checked before anything starts (as --out's),
// and the XML written atomically once the run documents are saved. A file that cannot be written
// then is DC_RESULT_WRITE (exit 3) naming --junit: the documents are already on disk.
import { dirname, resolve } from 'node:path';
import { DraincheckError, quote } from '../errors.js';
import { checkOutputDirectory, writeFileAtomic } from '../results/write.js';

export const junitOption = [
  '--junit <file>',
  'also write a JUnit XML report to FILE for CI (Jenkins, GitLab, GitHub): a testcase per run',
] as const;

/** Before the run: FILE's directory exists or can be made, and takes a file (exit 2 otherwise). */
export function checkJUnitPath(file: string | undefined): void {
  if (file === undefined) return;
  checkOutputDirectory(dirname(resolve(file)), '--junit', `--junit ${quote(file)}`);
}

/** After the run: the XML, atomically; DC_RESULT_WRITE with a --junit hint if it cannot be. */
export function writeJUnitFile(file: string | undefined, xml: () => string): void {
  if (file === undefined) return;
  try {
    writeFileAtomic(file, xml());
  } catch (error) {
    if (error instanceof DraincheckError && error.code === 'DC_RESULT_WRITE')
      throw new DraincheckError('DC_RESULT_WRITE', `--junit: ${error.message}`, {
        cause: error,
        hint: 'give --junit a writable file; the run documents were saved (see above)',
      });
    throw error;
  }
}
