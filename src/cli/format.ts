// `--format text|json|html`, one option for run, lab and report, and `--json`, the older
// spelling of `--format json`, kept as an alias (scripts use it). The formats themselves are
// src/kinds/kind.ts's reportFormats: every experiment kind has a renderer for each.
import { Command, Option } from 'commander';
import { DraincheckError } from '../errors.js';
import { reportFormats, type ReportFormat } from '../kinds/kind.js';
import { terminalSafeJson } from '../util/terminal-text.js';

export interface FormatFlags {
  format?: ReportFormat;
  json?: boolean;
}

/** Adds `--format` and its alias `--json`; `what` says what is printed on stdout. */
export function addFormatFlags(command: Command, what: string): Command {
  return command
    .addOption(
      new Option(
        '--format <format>',
        `print ${what} as text (timelines and comparison), json, or html (the timeline page) on stdout (default text)`,
      ).choices(reportFormats),
    )
    .option('--json', 'the same as --format json');
}

/** The format asked for; a usage error when --json and another --format disagree. */
export function chosenFormat(flags: FormatFlags): ReportFormat {
  if (flags.json && flags.format !== undefined && flags.format !== 'json') {
    throw new DraincheckError(
      'DC_USAGE',
      `--json and --format ${flags.format} ask for two formats: give one`,
    );
  }
  return flags.json ? 'json' : (flags.format ?? 'text');
}

/**
 * A rendered report made safe for stdout, which may be a terminal: JSON with C1 characters as
 * `\u00XX` escapes, HTML with control characters as character references (what a page shows
 * stays the same; a terminal never sees a raw escape sequence from a document). Text reports
 * escape their untrusted strings themselves.
 */
export function forStdout(format: ReportFormat, rendered: string): string {
  if (format === 'json') return terminalSafeJson(rendered);
  if (format === 'html')
    return rendered.replace(
      // eslint-disable-next-line no-control-regex -- control characters are what this removes
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g,
      (c) => `&#x${c.charCodeAt(0).toString(16)};`,
    );
  return rendered;
}
