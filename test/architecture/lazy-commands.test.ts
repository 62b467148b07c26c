// The CLI loads only the module of the command it runs: a Pod starting `draincheck server`
// does not pay for the lab, the reports, the platforms and their libraries (src/cli/program.ts).
// `--help` still lists every command, with the summary the command itself carries.
import assert from 'node:assert/strict';
import { sep } from 'node:path';
import { test } from 'node:test';
import { buildProgram, commandToRun, runsLocalPods } from '../../src/cli/program.js';
import { staticClosure } from '../helpers/static-closure.js';

const commandNames = [
  'lab',
  'run',
  'rollout',
  'report',
  'manifests',
  'cleanup',
  'server',
  'sidecar-proxy',
  'client',
  'load',
  'ingress-nginx',
];

test('the program statically loads no command module, and the server command no platform', () => {
  const program = staticClosure(new URL('../../src/cli/program.js', import.meta.url));
  const commands = program.files.filter((f) => f.includes(`${sep}cli${sep}commands${sep}`));
  assert.deepEqual(commands, [], 'command modules loaded with the program');
  const server = staticClosure(new URL('../../src/cli/commands/server.js', import.meta.url));
  assert.ok(
    !server.files.some((f) => f.includes(`${sep}platform${sep}`) || f.includes(`${sep}report${sep}`)),
    server.files.join('\n'),
  );
});

test('only the manifests command loads the YAML library at start-up; -f loads it when it reads a file', () => {
  // ~70 modules, ~35 ms of every start (src/workload/pod-file.ts loads it on first use).
  for (const name of commandNames.filter((n) => n !== 'manifests')) {
    const closure = staticClosure(new URL(`../../src/cli/commands/${name}.js`, import.meta.url));
    assert.ok(closure.files.length > 0, name);
    assert.ok(!closure.packages.has('yaml'), `${name} loads yaml statically`);
  }
});

test('the command to run: the first word, or the one after `help`; anything else needs them all', () => {
  assert.equal(commandToRun(['server', '--port', '0']), 'server');
  assert.equal(commandToRun(['help', 'lab']), 'lab');
  assert.equal(commandToRun(['lab', '--help']), 'lab');
  assert.equal(commandToRun(['--help', 'lab']), undefined);
  assert.equal(commandToRun(['--version']), undefined);
  assert.equal(commandToRun(['help']), undefined);
  assert.equal(commandToRun(['nope']), undefined);
  assert.equal(commandToRun([]), undefined);
});

test('built for one command, the program holds only it; built whole, --help lists every command', async () => {
  const one = await buildProgram('draincheck', 'server');
  assert.deepEqual(
    one.commands.map((c) => c.name()),
    ['server'],
  );
  const all = await buildProgram();
  assert.deepEqual(
    all.commands.map((c) => c.name()),
    commandNames,
  );
  const help = all.helpInformation().replace(/\s+/g, ' ');
  for (const c of all.commands) {
    assert.ok(c.summary().length > 0, c.name());
    assert.ok(help.includes(c.summary().replace(/\s+/g, ' ')), `--help shows ${c.name()}: ${c.summary()}`);
  }
});

test('a run starts before its report is loaded: lab, run and the run kind load no report page statically, and the runtime no ingress (issue 22: a lab’s start)', () => {
  for (const from of [
    'cli/commands/lab.js',
    'cli/commands/run.js',
    'kinds/run/index.js',
    'cli/run-many.js',
  ]) {
    const closure = staticClosure(new URL(`../../src/${from}`, import.meta.url));
    assert.ok(closure.files.length > 0, from);
    const page = closure.files.filter((f) => f.includes(`${sep}report${sep}html${sep}`));
    assert.deepEqual(page, [], `${from} loads the page's modules statically`);
  }
  const runtime = staticClosure(new URL('../../src/platform/local/cluster.js', import.meta.url));
  const ingress = runtime.files.filter((f) => /ingress-(nginx|haproxy)\.js$/.test(f));
  assert.deepEqual(ingress, [], 'the runtime loads its ingress proxies statically');
});

test('the host probes start with the modules when a command will run Pods here — a guess from argv, before the flags are parsed', () => {
  // The early module is small: the probes' own, not the runtime's.
  const early = staticClosure(new URL('../../src/platform/local/host-support.js', import.meta.url));
  assert.ok(early.files.length <= 12, early.files.join('\n'));
  assert.ok(!early.files.some((f) => f.endsWith(`${sep}cluster.js`)));
  assert.equal(runsLocalPods(['lab']), true);
  assert.equal(runsLocalPods(['rollout', '--replicas', '3']), true);
  assert.equal(runsLocalPods(['run', '--platform', 'local']), true);
  assert.equal(runsLocalPods(['run', '--platform', 'kube']), false);
  assert.equal(runsLocalPods(['rollout', '--platform=kube']), false);
  assert.equal(runsLocalPods(['lab'], { DRAINCHECK_PLATFORM: 'kube' }), false);
  // The flag wins over the environment, as commander's .env() has it.
  assert.equal(runsLocalPods(['lab', '--platform', 'local'], { DRAINCHECK_PLATFORM: 'kube' }), true);
  assert.equal(runsLocalPods(['lab', '--help']), false);
  assert.equal(runsLocalPods(['lab', '-h']), false);
  assert.equal(runsLocalPods(['report', 'x.json']), false);
  assert.equal(runsLocalPods(['server']), false);
  assert.equal(runsLocalPods([]), false);
});

test('the entry point loads the program only after it turned the compile cache on (a static import would be compiled first)', () => {
  const entry = staticClosure(new URL('../../src/cli/main.js', import.meta.url));
  assert.ok(
    !entry.files.some((f) => f.endsWith(`${sep}cli${sep}program.js`)),
    `statically: ${entry.files.join(', ')}`,
  );
});
