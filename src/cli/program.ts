// The `draincheck` command tree and its error discipline: a user mistake is one line on
// stderr and a documented exit code; only a bug shows a stack trace.
import { Command, CommanderError } from 'commander';
import { ExitCode, isDraincheckError } from '../errors.js';
import { version } from '../version.js';
import { terminalSafe } from '../util/terminal-text.js';

/**
 * Every command, in `--help` order, with its module loaded only when needed: a Pod starts
 * `draincheck server` and should not pay for the lab, the reports and the kube platform
 * (about half of a start's CPU time). Commander lists a command only once it is built, so
 * `--help`, `help` and an unknown command load them all.
 */
const commands: ReadonlyArray<readonly [name: string, load: () => Promise<Command>]> = [
  ['lab', async () => (await import('./commands/lab.js')).labCommand()],
  ['run', async () => (await import('./commands/run.js')).runCommand()],
  ['rollout', async () => (await import('./commands/rollout.js')).rolloutCommand()],
  ['report', async () => (await import('./commands/report.js')).reportCommand()],
  ['manifests', async () => (await import('./commands/manifests.js')).manifestsCommand()],
  ['cleanup', async () => (await import('./commands/cleanup.js')).cleanupCommand()],
  ['server', async () => (await import('./commands/server.js')).serverCommand()],
  ['sidecar-proxy', async () => (await import('./commands/sidecar-proxy.js')).sidecarProxyCommand()],
  ['client', async () => (await import('./commands/client.js')).clientCommand()],
  ['load', async () => (await import('./commands/load.js')).loadCommand()],
  ['ingress-nginx', async () => (await import('./commands/ingress-nginx.js')).ingressNginxCommand()],
];

/** The commands that run Pods on the embedded runtime unless told `--platform kube`. */
const runsPods: ReadonlySet<string> = new Set(['lab', 'run', 'rollout']);

/**
 * Whether `argv` will run Pods on the embedded runtime — read before the flags are parsed, so a
 * guess: a wrong yes costs a few read-only host probes, a wrong no only their head start.
 */
export function runsLocalPods(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (!runsPods.has(argv[0] ?? '')) return false;
  if (argv.some((a) => a === '-h' || a === '--help')) return false;
  const i = argv.lastIndexOf('--platform');
  const platform =
    (i >= 0 ? argv[i + 1] : argv.findLast((a) => a.startsWith('--platform='))?.slice('--platform='.length)) ??
    env.DRAINCHECK_PLATFORM ??
    'local';
  return platform === 'local';
}

/**
 * The one command `argv` runs — `<command> ...` or `help <command>` — or undefined when
 * anything else comes first (`--help lab` shows the program's help, so it needs them all).
 */
export function commandToRun(argv: readonly string[]): string | undefined {
  const name = argv[0] === 'help' ? argv[1] : argv[0];
  return commands.some(([n]) => n === name) ? name : undefined;
}

/** The command tree; with `only`, just that command (the others' modules are not loaded). */
export async function buildProgram(name = 'draincheck', only?: string): Promise<Command> {
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
      '\nExit codes: 0 ok, 1 verdict differs from --expect (lab --matrix: a scenario MISMATCH; rollout: above --max-failures), 2 usage error, 3 run incomplete (rollout: progress deadline exceeded), 4 ran but left objects on the cluster, 5 server cannot listen, 130 interrupted (see docs/ERRORS.md).',
    );
  const chosen = commands.filter(([n]) => only === undefined || n === only);
  for (const command of await Promise.all(chosen.map(([, load]) => load()))) program.addCommand(command);
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
  // The host probes' commands (a few forks, ~30 ms) run while the command's modules load: the
  // probe modules are few and come in first; the runtime later finds the facts known.
  if (runsLocalPods(argv))
    void import('../platform/local/host-support.js')
      .then((m) => m.prefetchHostSupport())
      .catch(() => undefined);
  const program = await buildProgram(name, commandToRun(argv));
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
