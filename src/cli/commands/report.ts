// `draincheck report FILE...`: re-render saved runs (files or result directories).
import { Command } from 'commander';
import { readRunDocuments } from '../../results/read.js';
import { checkOutputFile, writeFileAtomic } from '../../results/write.js';
import { renderHtmlReport } from '../../report/html/index.js';
import { renderTextReport } from '../../report/text.js';
import { styleFor } from '../../report/style.js';
import { terminalSafe, terminalSafeJson } from '../../util/terminal-text.js';

export function reportCommand(): Command {
  return new Command('report')
    .summary('re-render saved run documents: text timeline and comparison, or the HTML page')
    .description(
      'Read run documents (files, or directories written by run/lab) and print each timeline and the comparison. Every document is validated against draincheck.run/v1 first.',
    )
    .argument('<paths...>', 'run document files or result directories')
    .option('--json', 'print the documents as a JSON array instead')
    .option('--html <file>', 'also write the self-contained HTML timeline page to this file')
    .action((paths: string[], flags: { json?: boolean; html?: string }) => {
      if (flags.html) checkOutputFile(flags.html, '--html');
      const docs = readRunDocuments(paths);
      if (flags.html) {
        writeFileAtomic(
          flags.html,
          renderHtmlReport(docs, { title: 'draincheck report', generatedAt: new Date().toISOString() }),
        );
      }
      if (flags.json) process.stdout.write(`${terminalSafeJson(JSON.stringify(docs, null, 2))}\n`);
      else
        process.stdout.write(
          `${renderTextReport(docs, styleFor(process.stdout))}\n${flags.html ? `\nwrote ${terminalSafe(flags.html)}\n` : ''}`,
        );
    });
}
