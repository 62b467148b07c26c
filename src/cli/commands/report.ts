// `draincheck report FILE...`: re-render saved documents (files or result directories), each
// by the renderers of its kind (src/kinds/registry.ts), read from its `schema` field.
import { Command } from 'commander';
import { readDocuments, renderDocuments } from '../../kinds/read.js';
import { checkOutputFile, writeFileAtomic } from '../../results/write.js';
import { styleFor } from '../../report/style.js';
import { terminalSafe } from '../../util/terminal-text.js';
import { addFormatFlags, chosenFormat, forStdout, type FormatFlags } from '../format.js';

interface ReportFlags extends FormatFlags {
  html?: string;
}

export function reportCommand(): Command {
  const command = new Command('report')
    .summary('re-render saved run documents: text timeline and comparison, JSON, or the HTML page')
    .description(
      'Read run documents (files, or directories written by run/lab) and print each timeline and the comparison. Every document is validated against the schema of its kind (its `schema` field, e.g. draincheck.run/v1) first.',
    )
    .argument('<paths...>', 'run document files or result directories');
  return addFormatFlags(command, 'the documents')
    .option('--html <file>', 'also write the self-contained HTML timeline page to this file')
    .action(async (paths: string[], flags: ReportFlags) => {
      const format = chosenFormat(flags);
      if (flags.html) checkOutputFile(flags.html, '--html');
      const docs = readDocuments(paths);
      const context = {
        style: styleFor(process.stdout),
        title: 'draincheck report',
        generatedAt: new Date().toISOString(),
      };
      if (flags.html) writeFileAtomic(flags.html, await renderDocuments(docs, 'html', context));
      const wrote = flags.html && format === 'text' ? `\nwrote ${terminalSafe(flags.html)}\n` : '';
      process.stdout.write(`${forStdout(format, await renderDocuments(docs, format, context))}\n${wrote}`);
    });
}
