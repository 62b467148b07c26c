// A container whose process exits at once (a server that fails to listen, a missing module) has
// started: its end is an exit code and its output, as the kubelet reports it — not a failure to
// start. In PID 1 mode the container runs under `unshare --pid --fork`, and its pid is read from
// the wrapper's /proc entry; a process that is already gone left none to read, and the start
// used to fail with "could not find the container process forked by unshare".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContainerProcess, detectPid1Support } from '../../../src/platform/local/container.js';

const pid1 = detectPid1Support();

test(
  `a PID 1 container that exits at once has started; its exit code and output are its end (skipped where PID 1 mode is not available${pid1.pid1 ? '' : `: ${pid1.reason}`})`,
  { skip: !pid1.pid1 },
  async () => {
    const STARTS = 20;
    for (let i = 0; i < STARTS; i += 1) {
      const lines: string[] = [];
      const container = await ContainerProcess.start({
        argv: ['sh', '-c', 'echo "listen EADDRINUSE" >&2; exit 3'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        pid1: true,
        onOutput: (line) => lines.push(line),
      });
      const exit = await container.exited;
      assert.equal(exit.exitCode, 3, `start ${i + 1} of ${STARTS}`);
      assert.ok(
        lines.some((l) => l.includes('listen EADDRINUSE')),
        lines.join(' | '),
      );
      // Its pid is gone: a signal finds nothing, and says so.
      assert.equal(container.signal('SIGTERM'), false);
    }
  },
);
