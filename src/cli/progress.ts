// Progress while runs are going: on a terminal, one live line per run (phase and elapsed
// time), redrawn in place; elsewhere (CI, pipes) one plain line per phase change; with
// --json, nothing (stdout carries only the document).
import type { Phase } from '../experiment/protocol.js';
import { terminalSafe } from '../util/terminal-text.js';

export interface Progress {
  phase(run: string, phase: Phase, elapsedMs: number): void;
  done(): void;
}

export function createProgress(
  stream: NodeJS.WriteStream,
  mode: 'tty' | 'lines' | 'off',
  runs: string[],
): Progress {
  if (mode === 'off') return { phase: () => undefined, done: () => undefined };
  // Run names are printed between the tool's own cursor movements: never raw.
  const name = (run: string) => terminalSafe(run);
  const started = performance.now();
  if (mode === 'lines') {
    return {
      phase: (run, phase, ms) => stream.write(`${name(run)}: ${phase} (+${(ms / 1000).toFixed(1)} s)\n`),
      done: () => undefined,
    };
  }
  const state = new Map<string, string>(runs.map((r) => [r, 'starting']));
  let drawn = false;
  const draw = () => {
    if (drawn) stream.write(`\u001b[${runs.length}A`);
    const elapsed = ((performance.now() - started) / 1000).toFixed(1);
    for (const r of runs)
      stream.write(`\u001b[2K  ${name(r).padEnd(10)} ${String(state.get(r)).padEnd(14)} ${elapsed} s\n`);
    drawn = true;
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  draw();
  return {
    phase: (run, phase) => {
      state.set(run, phase);
      draw();
    },
    done: () => {
      clearInterval(timer);
      draw();
    },
  };
}

export function progressMode(
  stream: NodeJS.WriteStream,
  json: boolean,
  env: NodeJS.ProcessEnv = process.env,
): 'tty' | 'lines' | 'off' {
  if (json) return 'off';
  if (stream.isTTY && !env.CI && env.TERM !== 'dumb') return 'tty';
  return 'lines';
}
