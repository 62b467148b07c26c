// The `draincheck` command tree and its error discipline: a user mistake is one line on
// stderr and a documented exit code; only a bug shows a stack trace.
import { Command, CommanderError } from 'commander';
import { ExitCode, isDraincheckError } from '../errors.js';
import { cleanupCommand } from './commands/cleanup.js';
import { clientCommand } from './commands/client.js';
import { labCommand } from './commands/lab.js';
import { manifestsCommand } from './commands/manifests.js';
import { reportCommand } from './commands/report.js';
import { rolloutCommand } from './commands/rollout.js';
import { runCommand } from './commands/run.js';
import { serverCommand } from './commands/server.js';
import { version } from '../version.js';
import { terminalSafe } from '../util/terminal-text.js';

export function buildProgram(name = 'draincheck'): Command {
  const program = new Command(name)
    .description(
      'Follow one HTTP request a Pod has already accepted through that Pod’s deletion, and answer three ' +
        'questions separately, each with evidence: is the new Pod ready? has the old Pod left the targets ' +
        'of new requests? did the old Pod finish the requests it had already accepted?',
    )
    .version(version, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 verdict differs from --expect, 2 usage error, 3 run incomplete, 4 ran but left objects on the cluster, 5 server cannot listen, 130 interrupted (see docs/ERRORS.md).',
    );
  program.addCommand(labCommand());
  program.addCommand(runCommand());
  program.addCommand(rolloutCommand());
  program.addCommand(reportCommand());
  program.addCommand(manifestsCommand());
  program.addCommand(cleanupCommand());
  program.addCommand(serverCommand());
  program.addCommand(clientCommand());
  applyErrorDiscipline(program, name);
  return program;
}

function applyErrorDiscipline(command: Command, name: string): void {
  command.exitOverride();
  command.configureOutput({
    outputError: (text, write) => {
      // commander writes "error: unknown option '--x'\n(Did you mean --y?)"; keep it one line.
      const line = terminalSafe(
        text
          .replace(/^error: /, '')
          .replace(/\n+/g, ' ')
          .trim(),
      );
      write(`${name}: ${line} (see '${commandPath(command, name)} --help')\n`);
    },
  });
  for (const sub of command.commands) applyErrorDiscipline(sub, name);
}

function commandPath(command: Command, name: string): string {
  const parts: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) parts.unshift(c.parent ? c.name() : name);
  return parts.join(' ');
}

/**
 * `draincheck ... | head`: when the reader goes away, stop quietly, as Unix tools do, instead
 * of dying with an EPIPE stack trace. A terminal that went away (closed window, dropped ssh:
 * SIGHUP, then EIO on every write) can show nothing more, but the run must still clean up
 * and save its document: its output is dropped, the command goes on.
 */
function quietOnClosedPipe(stream: NodeJS.WriteStream) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (error.code === 'EIO') return;
    throw error;
  });
}

/** Run the CLI; resolves to the exit code. Never throws for a user mistake. */
export async function runCli(argv: string[], name = 'draincheck'): Promise<number | undefined> {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  const program = buildProgram(name);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      ) {
        return ExitCode.ok;
      }
      return ExitCode.usage;
    }
    if (isDraincheckError(error)) {
      // The message may quote a Pod's output, an API server's words or a file name: never raw.
      process.stderr.write(`${name}: ${terminalSafe(error.oneLine())}\n`);
      return error.exitCode;
    }
    throw error;
  }
}
