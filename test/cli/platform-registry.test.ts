// The platform registry drives the CLI: `--platform` offers every registered platform, `run`
// and `lab` take every platform's flags, and a flag of one platform is refused on each other
// one, with the words of the platform it belongs to — for every entry, not only today's two.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import {
  allPlatformFlags,
  checkFlags,
  platformEntry,
  platforms,
  type FlagSpec,
} from '../../src/platform/registry.js';

const command = async (name: string): Promise<Command> => {
  const found = (await buildProgram()).commands.find((c) => c.name() === name);
  assert.ok(found, `command ${name}`);
  return found;
};

/** A value that counts as given: a choice other than the default, true, or false for --no-x. */
const given = (spec: FlagSpec): unknown =>
  spec.flags.startsWith('--no-')
    ? false
    : !spec.flags.includes('<')
      ? true
      : (spec.choices?.find((c) => c !== spec.default) ?? 'x');

const bare = (spec: FlagSpec) => spec.flags.replace(/^-\w, /, '').replace(/ <.*$/, '');

for (const name of ['run', 'lab']) {
  test(`${name}: --platform offers every registered platform, and every platform's flags are options`, async () => {
    const options = (await command(name)).options;
    const platform = options.find((o) => o.long === '--platform');
    assert.deepEqual(
      platform?.argChoices,
      platforms.map((p) => p.name),
    );
    const longs = new Set(options.map((o) => o.long));
    for (const entry of platforms)
      for (const spec of entry.flags) assert.ok(longs.has(bare(spec)), `${entry.name}: ${spec.flags}`);
    const help = (await command(name)).helpInformation();
    for (const spec of allPlatformFlags()) assert.ok(help.includes(spec.flags), `--help shows ${spec.flags}`);
  });
}

test('allPlatformFlags lists a flag two platforms share once', () => {
  const flags = allPlatformFlags().map((f) => f.flags);
  assert.deepEqual(flags, [...new Set(flags)]);
  assert.ok(flags.includes('--prestop-action <kind>'));
});

test("every platform refuses each other platform's own flags, naming the platform they belong to", () => {
  let refusals = 0;
  for (const entry of platforms) {
    const own = new Set(entry.flags.map((f) => f.flags));
    for (const other of platforms.filter((p) => p !== entry))
      for (const spec of other.flags.filter((f) => !own.has(f.flags))) {
        assert.throws(
          () => checkFlags(entry, { [spec.attribute]: given(spec) }),
          (e: Error & { code?: string; hint?: string }) =>
            e.code === 'DC_USAGE' &&
            e.message === `${bare(spec)} applies only to ${other.named}` &&
            e.hint === other.refusedHint,
          `${spec.flags} on ${entry.name}`,
        );
        refusals++;
      }
  }
  assert.ok(refusals >= 10, `refusals checked: ${refusals}`);
});

test('a flag at its default, or one both platforms take, is not refused', () => {
  for (const entry of platforms) {
    const defaults = Object.fromEntries(
      allPlatformFlags()
        .filter((f) => f.default !== undefined)
        .map((f) => [f.attribute, f.default]),
    );
    checkFlags(entry, { ...defaults, prestopAction: 'exec' });
  }
});

test('an unknown platform name is a usage error listing the registered ones', () => {
  assert.throws(
    () => platformEntry('mars'),
    (e: Error & { code?: string; hint?: string }) =>
      e.code === 'DC_USAGE' && e.hint === `--platform takes ${platforms.map((p) => p.name).join(' or ')}`,
  );
});

test('what a failed container and a failed cleanup mean is said by the platform that ran them, not by name checks elsewhere', async () => {
  const { warnLeftovers } = await import('../../src/cli/leftovers.js');
  const { podFailedError } = await import('../../src/experiment/failures.js');
  const failure = { exitCode: 1, reason: 'Error', message: null };
  const where = { namespace: 'ns-1', pod: 'work' };
  for (const entry of platforms) {
    assert.equal(
      podFailedError(failure, where, null, 'before the experiment began', entry.name).hint,
      entry.outputHint(where),
      entry.name,
    );
    const lines: string[] = [];
    const doc = {
      runId: 'r1',
      platform: { name: entry.name, details: [] },
      events: [{ id: 1, at: 0, source: 'runner', type: 'cleanup-error', data: { message: 'boom' } }],
    } as unknown as Parameters<typeof warnLeftovers>[0][number];
    assert.equal(
      warnLeftovers([doc], { kubeconfig: '/k' }, (l) => lines.push(l)),
      true,
    );
    assert.ok(lines[0]?.endsWith(`(${entry.leftoversHint('r1', { kubeconfig: '/k' })})`), lines[0]);
  }
  // A document from a platform this build does not know still gets a line, with the generic hint.
  const lines: string[] = [];
  const foreign = {
    runId: 'r2',
    platform: { name: 'elsewhere', details: [] },
    events: [{ id: 1, at: 0, source: 'runner', type: 'cleanup-error', data: { message: 'boom' } }],
  } as unknown as Parameters<typeof warnLeftovers>[0][number];
  warnLeftovers([foreign], {}, (l) => lines.push(l));
  assert.match(lines[0] ?? '', /see the cleanup-error event in the run document\)$/);
});
