// The scenario's integer flags come from one table (scenarioSettings in
// src/workload/scenario.ts): each row is a flag of run/lab/manifests with its default in
// --help, and resolveScenario enforces the row's range under the flag's name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { addScenarioFlags, scenarioInput } from '../../src/cli/scenario-flags.js';
import { isDraincheckError } from '../../src/errors.js';
import { readFileSync } from 'node:fs';
import { ScenarioSchema } from '../../src/experiment/run-document.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { buildWorkload } from '../../src/workload/manifests.js';
import { planRun } from '../../src/experiment/plan.js';
import { clientArgs } from '../../src/platform/kube/client-pod.js';
import { clientCommand } from '../../src/cli/commands/client.js';
import {
  resolveScenario,
  scenarioChoiceSettings,
  scenarioDefaults,
  scenarioSettingRows,
  scenarioSettings,
} from '../../src/workload/scenario.js';
import { sampleRuns } from '../helpers/sample-runs.js';
import {
  resolveTarget,
  targetProtocolSettings,
  type TargetProtocolSettingName,
} from '../../src/workload/target.js';
import { addTargetFlags, targetFromFlags } from '../../src/cli/target-flags.js';

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
    // A row of one protocol's (the gRPC connection age) is read with that protocol.
    const protocol = 'protocols' in setting ? { protocol: setting.protocols[0] } : {};
    const flags = (value: number) => ({ [attribute(setting.flag)]: String(value), ...protocol });
    assert.doesNotThrow(() => resolveScenario(scenarioInput(flags(setting.max), 30)), setting.flag);
    assert.throws(
      () => resolveScenario(scenarioInput(flags(setting.max + 1), 30)),
      (e: unknown) =>
        isDraincheckError(e) &&
        e.code === 'DC_USAGE' &&
        e.message ===
          `${setting.flag} must be an integer from ${setting.min} to ${setting.max}, got "${setting.max + 1}"`,
      setting.flag,
    );
  }
});

test('every row of the scenario table reaches the flags, the run document schema, the Pod, the HTML facts and the docs', () => {
  const command = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 });
  const shipped = JSON.parse(
    readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8'),
  ) as { properties: { scenario: { properties: Record<string, { type?: string; description?: string }> } } };
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const runDocDocs = readFileSync(new URL('../../../docs/RUN-DOCUMENT.md', import.meta.url), 'utf8');
  for (const [, setting] of scenarioSettingRows) {
    // The flag, and its value from the command line through scenarioInput and resolveScenario
    // into the document's field.
    assert.ok(
      command.options.some((o) => o.long === setting.flag),
      setting.flag,
    );
    const value = Math.min(setting.max, 7);
    const protocol = setting.protocols ? ['--protocol', setting.protocols[0]!] : [];
    const parsed = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 }).parse(
      [setting.flag, String(value), ...protocol],
      { from: 'user' },
    );
    const scenario = resolveScenario(scenarioInput(parsed.opts(), 30));
    assert.equal(scenario[setting.field], value, `${setting.flag} → scenario.${setting.field}`);
    // The run document's schema, from the row (its help as the field's description).
    const field = ScenarioSchema.shape[setting.field];
    assert.equal(field.description, setting.help, setting.field);
    assert.equal(shipped.properties.scenario.properties[setting.field]?.description, setting.help);
    assert.equal(shipped.properties.scenario.properties[setting.field]?.type, 'integer');
    // The lab server gets it in the Pod where the row names its env variable.
    const pod = buildWorkload(
      { ...scenario, onSigterm: 'drain' },
      { runId: 'r1', namespace: 'ns', name: 'work' },
    ).pod;
    const env = pod.spec!.containers[0]!.env ?? [];
    if ('serverEnv' in setting) {
      assert.deepEqual(
        env.find((e) => e.name === setting.serverEnv),
        { name: setting.serverEnv, value: String(value) },
        setting.flag,
      );
    }
    // The HTML run section shows it under its field name.
    const doc = { ...sampleRuns()[0]!, scenario: { ...sampleRuns()[0]!.scenario, [setting.field]: value } };
    const html = renderHtmlReport([doc]);
    assert.ok(html.includes(`<dt>${setting.field}</dt><dd>${value}</dd>`), `HTML facts: ${setting.field}`);
    // The docs: the README's flag table and the run document's scenario fields.
    assert.ok(readme.includes(`| \`${setting.flag}`), `README: ${setting.flag}`);
    assert.ok(runDocDocs.includes(`\`${setting.field}\``), `docs/RUN-DOCUMENT.md: ${setting.field}`);
  }
});

test('--protocol: a flag of run (default http1); h2c reaches the Pod as PROTOCOL and the client plan; refused with another server', () => {
  const command = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 });
  const option = command.options.find((o) => o.long === '--protocol');
  assert.ok(option);
  assert.deepEqual(option.argChoices, ['http1', 'h2c', 'grpc', 'ws']);
  assert.equal(resolveScenario({}).protocol, 'http1');
  const names = { runId: 'r1', namespace: 'ns', name: 'work' };
  const env = (protocol?: 'http1' | 'h2c') =>
    buildWorkload(resolveScenario(scenarioInput({ protocol }, 30)), names).pod.spec!.containers[0]!.env!;
  assert.deepEqual(
    env('h2c').find((e) => e.name === 'PROTOCOL'),
    { name: 'PROTOCOL', value: 'h2c' },
  );
  const plan = planRun(resolveScenario({ protocol: 'h2c' }), { runId: 'r1' });
  assert.equal(plan.client.protocol, 'h2c');
  assert.equal(planRun(resolveScenario({}), { runId: 'r1' }).client.protocol, undefined);
  // The client Pod's `draincheck client` gets it as a flag.
  const args = clientArgs(plan.client, 'http://work.ns.svc:80');
  assert.equal(args[args.indexOf('--protocol') + 1], 'h2c');
  // At its default it is not sent: HTTP/1.1 manifests stay as they were.
  assert.equal(
    env('http1').find((e) => e.name === 'PROTOCOL'),
    undefined,
  );
  assert.throws(
    () => resolveScenario({ protocol: 'h2c', serverCommand: ['/bin/sh', '-c', 'exec node s.js'] }),
    (e: unknown) =>
      isDraincheckError(e) &&
      e.code === 'DC_USAGE' &&
      /--protocol h2c works with draincheck's own lab server only, unless `draincheck run` describes your service with --work/.test(
        e.message,
      ),
  );
  // With --work it is your own service over HTTP/2: its own server, probed over TCP (a cleartext
  // node:http2 server answers no HTTP/1.1), the work one HTTP/2 stream.
  const own = resolveScenario({
    protocol: 'h2c',
    serverCommand: ['/bin/sh', '-c', 'exec node s.js'],
    target: resolveTarget({ work: 'GET /slow?ms={ms}&id={id}' }),
  });
  const ownContainer = buildWorkload(own, names).pod.spec!.containers[0]!;
  assert.deepEqual(ownContainer.readinessProbe?.tcpSocket, { port: 'http' });
  assert.equal(
    ownContainer.env!.find((e) => e.name === 'PROTOCOL'),
    undefined,
    'not the lab server',
  );
  assert.equal(planRun(own, { runId: 'r1' }).client.protocol, 'h2c');
  assert.throws(
    () => resolveScenario({ protocol: 'h3' as 'h2c' }),
    (e: unknown) =>
      isDraincheckError(e) &&
      e.code === 'DC_USAGE' &&
      /--protocol must be one of http1, h2c, grpc, ws/.test(e.message),
  );
});

test('--protocol grpc: PROTOCOL and the kubelet grpc readiness probe on the container port; the client plan; --drain-idle-ms refused', () => {
  const names = { runId: 'r1', namespace: 'ns', name: 'work' };
  const container = buildWorkload(resolveScenario({ protocol: 'grpc' }), names).pod.spec!.containers[0]!;
  assert.deepEqual(
    container.env!.find((e) => e.name === 'PROTOCOL'),
    { name: 'PROTOCOL', value: 'grpc' },
  );
  assert.deepEqual(container.readinessProbe?.grpc, { port: container.ports![0]!.containerPort, service: '' });
  assert.equal(container.readinessProbe?.httpGet, undefined);
  assert.equal(planRun(resolveScenario({ protocol: 'grpc' }), { runId: 'r1' }).client.protocol, 'grpc');
  assert.throws(
    () => resolveScenario({ protocol: 'grpc', drainIdleMs: 100 }),
    (e: unknown) =>
      isDraincheckError(e) && e.code === 'DC_USAGE' && /with --protocol grpc the drain/.test(e.message),
  );
});

test('--protocol ws: PROTOCOL, the kubelet httpGet readiness probe (HTTP/1.1 on the same port), the client plan and the client Pod flag; --drain-idle-ms refused', () => {
  const names = { runId: 'r1', namespace: 'ns', name: 'work' };
  const container = buildWorkload(resolveScenario({ protocol: 'ws' }), names).pod.spec!.containers[0]!;
  assert.deepEqual(
    container.env!.find((e) => e.name === 'PROTOCOL'),
    { name: 'PROTOCOL', value: 'ws' },
  );
  assert.equal(container.readinessProbe?.httpGet?.path, '/healthz');
  assert.equal(container.readinessProbe?.grpc, undefined);
  const plan = planRun(resolveScenario({ protocol: 'ws' }), { runId: 'r1' });
  assert.equal(plan.client.protocol, 'ws');
  const args = clientArgs(plan.client, 'http://work.ns.svc:80');
  assert.equal(args[args.indexOf('--protocol') + 1], 'ws');
  assert.throws(
    () => resolveScenario({ protocol: 'ws', drainIdleMs: 100 }),
    (e: unknown) =>
      isDraincheckError(e) &&
      e.code === 'DC_USAGE' &&
      /with --protocol ws the drain ends each socket with close 1001/.test(e.message),
  );
  assert.throws(
    () => resolveScenario({ protocol: 'ws', maxConnectionAgeMs: 1000 }),
    (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && /not ws/.test(e.message),
  );
});

test('--sidecar and --sidecar-on-sigterm: rows with their choices; the Pod as the kubelet needs it; refused where the proxy cannot front the server', () => {
  const command = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 });
  for (const [, row] of Object.entries(scenarioChoiceSettings)) {
    const option = command.options.find((o) => o.long === row.flag);
    assert.ok(option, row.flag);
    assert.deepEqual(option.argChoices, [...row.choices]);
    assert.ok(option.description.startsWith(row.help), row.flag);
    assert.ok(option.description.endsWith(`(default ${row.defaultNote})`), option.description);
  }
  const parsed = addScenarioFlags(new Command('run'), { policy: true, graceDefault: 30 }).parse(
    ['--sidecar', 'native', '--sidecar-on-sigterm', 'drain', '--port', '9000'],
    { from: 'user' },
  );
  const scenario = resolveScenario(scenarioInput(parsed.opts(), 30));
  assert.deepEqual(scenario.sidecar, { mode: 'native', onSigterm: 'drain' });
  const names = { runId: 'r1', namespace: 'ns', name: 'work' };
  const { pod, service } = buildWorkload(scenario, names);
  // native: an init container with restartPolicy Always, on the Pod's port; the server behind it.
  const [sidecar] = pod.spec!.initContainers!;
  assert.equal(sidecar!.restartPolicy, 'Always');
  assert.deepEqual(sidecar!.args, ['sidecar-proxy']);
  assert.deepEqual(sidecar!.ports, [{ name: 'http', containerPort: 9000, protocol: 'TCP' }]);
  const env = Object.fromEntries(
    sidecar!.env!.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
  );
  assert.deepEqual([env.PORT, env.UPSTREAM_PORT, env.SIDECAR_ON_SIGTERM], ['9000', '9001', 'drain']);
  const server = pod.spec!.containers[0]!;
  assert.deepEqual(server.ports, [{ name: 'app', containerPort: 9001, protocol: 'TCP' }]);
  assert.equal(server.env!.find((e) => e.name === 'PORT')?.value, '9001');
  assert.equal(server.readinessProbe?.httpGet?.port, 9000, 'the probe goes through the proxy');
  assert.equal(service.spec!.ports![0]!.targetPort, 'http');
  // regular: a second entry of `containers`.
  const regular = buildWorkload(resolveScenario({ sidecar: 'regular' }), names).pod;
  assert.deepEqual(
    regular.spec!.containers.map((c) => [c.name, c.restartPolicy]),
    [
      ['server', undefined],
      ['sidecar', undefined],
    ],
  );
  assert.equal(regular.spec!.initContainers, undefined);
  // None: the Pod as before.
  assert.equal(resolveScenario({}).sidecar, undefined);
  assert.equal(buildWorkload(resolveScenario({}), names).pod.spec!.containers.length, 1);
  // The run document's field.
  assert.ok(ScenarioSchema.shape.sidecar.description?.includes('--sidecar'));
  for (const [input, pattern] of [
    [{ sidecarOnSigterm: 'drain' }, /--sidecar-on-sigterm needs --sidecar/],
    [
      { sidecar: 'regular', protocol: 'h2c' },
      /--sidecar is an HTTP\/1\.1 proxy: it does not carry --protocol h2c/,
    ],
    [
      { sidecar: 'native', serverCommand: ['/bin/sh', '-c', 'exec node s.js'] },
      /--sidecar works with draincheck's own lab server only/,
    ],
    [{ sidecar: 'both' }, /--sidecar must be one of regular, native/],
  ] as const)
    assert.throws(
      () => resolveScenario(input as never),
      (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && pattern.test(e.message),
      JSON.stringify(input),
    );
});

test("your own service's protocol rows (--grpc-*, --ws-*): flags of run with their help, the run document's target field, the README and docs/YOUR-SERVICE.md", () => {
  const command = addTargetFlags(new Command('run'));
  const shipped = readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8');
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const yours = readFileSync(new URL('../../../docs/YOUR-SERVICE.md', import.meta.url), 'utf8');
  const runDocDocs = readFileSync(new URL('../../../docs/RUN-DOCUMENT.md', import.meta.url), 'utf8');
  const proto = new URL('../../../test/fixtures/protos/orders.proto', import.meta.url).pathname;
  // A value per row, and what the target's field holds then.
  const values: Record<TargetProtocolSettingName, [string, string]> = {
    grpcMethod: ['shop.v1.Orders/Place', '/shop.v1.Orders/Place'],
    grpcProto: [proto, proto],
    grpcRequest: ['{"order_id":"{id}","work_ms":{ms}}', '{"order_id":"{id}","work_ms":{ms}}'],
    wsPath: ['/jobs', '/jobs'],
    wsMessage: ['{"job":"{id}","ms":{ms}}', '{"job":"{id}","ms":{ms}}'],
    wsDone: ['"finished":"{id}"', '"finished":"{id}"'],
  };
  const rows = Object.entries(targetProtocolSettings) as Array<
    [TargetProtocolSettingName, (typeof targetProtocolSettings)[TargetProtocolSettingName]]
  >;
  const targetShape = ScenarioSchema.shape.target.unwrap().unwrap().shape;
  for (const protocol of ['grpc', 'ws'] as const) {
    const mine = rows.filter(([, row]) => row.protocol === protocol);
    assert.ok(mine.length > 0, protocol);
    const parsed = addTargetFlags(new Command('run')).parse(
      mine.flatMap(([name, row]) => [row.flag, values[name][0]]),
      { from: 'user' },
    );
    const target = targetFromFlags(parsed.opts());
    for (const [name, row] of mine) {
      const option = command.options.find((o) => o.long === row.flag);
      assert.ok(option, row.flag);
      assert.equal(option.flags, `${row.flag} ${row.arg}`);
      assert.equal(option.description, row.help);
      // From the command line into the target's field the row names.
      const [group, field] = row.field.split('.') as [typeof protocol, string];
      assert.equal(group, protocol, row.field);
      const got = (target?.[group] as Record<string, unknown> | null | undefined)?.[field];
      assert.equal(got, values[name][1], `${row.flag} → target.${row.field}`);
      // The run document's schema carries the row's help as the field's description.
      const groupShape = targetShape[group].unwrap().unwrap().shape as Record<
        string,
        { description?: string }
      >;
      assert.equal(groupShape[field]?.description, row.help, row.field);
      assert.ok(
        shipped.includes(JSON.stringify(row.help).slice(1, -1)),
        `schema/run.v1.schema.json: ${row.flag}`,
      );
      assert.ok(readme.includes(`| \`${row.flag}`), `README: ${row.flag}`);
      assert.ok(yours.includes(`| \`${row.flag}`), `docs/YOUR-SERVICE.md: ${row.flag}`);
      assert.ok(runDocDocs.includes(`\`${field}\``), `docs/RUN-DOCUMENT.md: ${field}`);
    }
    // The scenario takes the rows with their protocol only.
    assert.ok(resolveScenario({ protocol, serverCommand: ['node', 's.js'], target }).target?.[protocol]);
    assert.throws(
      () => resolveScenario({ protocol: 'h2c', serverCommand: ['node', 's.js'], target }),
      (e: unknown) =>
        isDraincheckError(e) && new RegExp(`give --protocol ${protocol} \\(got h2c\\)`).test(e.message),
    );
  }
});

test("your own service's protocol rows reach the client Pod: draincheck client takes each row's flag, and clientArgs gives it the runner's value", () => {
  const client = clientCommand();
  const proto = new URL('../../../test/fixtures/protos/orders.proto', import.meta.url).pathname;
  const inputs = {
    grpc: { grpcMethod: 'shop.v1.Orders/Place', grpcProto: proto, grpcRequest: '{"order_id":"{id}"}' },
    ws: { wsPath: '/jobs', wsMessage: '{"job":"{id}"}', wsDone: '"finished":"{id}"' },
  } as const;
  for (const protocol of ['grpc', 'ws'] as const) {
    const target = resolveTarget(inputs[protocol])!;
    const plan = planRun(resolveScenario({ protocol, serverCommand: ['node', 's.js'], target }), {
      runId: 'r1',
    });
    const args = clientArgs(plan.client, 'http://work.ns.svc:80');
    for (const [name, row] of Object.entries(targetProtocolSettings)) {
      assert.ok(
        client.options.some((o) => o.flags === `${row.flag} ${row.arg}`),
        `draincheck client ${row.flag}`,
      );
      if (row.protocol !== protocol) {
        assert.ok(!args.includes(row.flag), `${protocol}: ${row.flag} sent`);
        continue;
      }
      const given = (inputs[protocol] as Record<string, string>)[name];
      // The method travels as the user wrote it (without the leading slash of its :path).
      assert.equal(args[args.indexOf(row.flag) + 1], given, `${protocol}: ${row.flag}`);
    }
  }
});
