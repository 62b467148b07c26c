// The scenario's integer flags come from one table (scenarioSettings in
// src/workload/scenario.ts): each row is a flag of run/lab/manifests with its default in
// --help, and resolveScenario enforces the row's range under the flag's name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { addScenarioFlags, scenarioInput } from '../../src/cli/scenario-flags.js';
import { isDraincheckError } from '../../src/errors.js';
import { resolveScenario, scenarioDefaults, scenarioSettings } from '../../src/workload/scenario.js';

const rows = Object.entries(scenarioSettings);

test('every setting is a flag with its default in --help', () => {
  const command = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 });
  const help = command.helpInformation();
  for (const [name, setting] of rows) {
    const option = command.options.find((o) => o.long === setting.flag);
    assert.ok(option, setting.flag);
    assert.equal(option.flags, `${setting.flag} ${setting.arg}`);
    const value = name === 'graceSeconds' ? 30 : scenarioDefaults[name as keyof typeof scenarioDefaults];
    assert.ok(option.description.startsWith(`${setting.help} (default ${String(value)}`), option.description);
    assert.ok(help.includes(setting.flag));
  }
  const lab = addScenarioFlags(new Command('lab'), { policy: false, graceDefault: 5 });
  assert.match(lab.options.find((o) => o.long === '--grace-seconds')!.description, /\(default 5\)$/);
});

test('each range is enforced under the flag name: max accepted, max + 1 refused', () => {
  const attribute = (flag: string) => flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  for (const [, setting] of rows) {
    const flags = (value: number) => ({ [attribute(setting.flag)]: String(value) });
    assert.doesNotThrow(() => resolveScenario(scenarioInput(flags(setting.max), 30)), setting.flag);
    assert.throws(
      () => resolveScenario(scenarioInput(flags(setting.max + 1), 30)),
      (e: unknown) =>
        isDraincheckError(e) &&
        e.code === 'DC_USAGE' &&
        e.message === `${setting.flag} must be at most ${setting.max}`,
      setting.flag,
    );
  }
});
