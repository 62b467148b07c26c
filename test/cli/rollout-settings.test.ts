// The rollout's and the load's settings come from one table (rolloutSettings in
// src/kinds/rollout/settings.ts, extending the load's rows in src/probe/load/settings.ts): every
// row is a flag of `draincheck rollout` with its default in --help, its sample value parses into
// the plan, lands in the document's field (the schema from the row, the shipped JSON schema too),
// goes to the load Pod as `draincheck load`'s flag and is read back by that command the same, and
// is said in the text and the HTML report. As test/cli/scenario-flags.test.ts does for the scenario.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadCommand, loadCommandSettings, readLoadFlags } from '../../src/cli/commands/load.js';
import { rolloutCommand } from '../../src/cli/commands/rollout.js';
import { isDraincheckError } from '../../src/errors.js';
import { RolloutDocumentSchema, type RolloutDocument } from '../../src/kinds/rollout/document.js';
import { renderRolloutHtml } from '../../src/kinds/rollout/render/html.js';
import { planRollout } from '../../src/kinds/rollout/plan.js';
import { chooseLoadPods, LOAD_POD_CAPACITY } from '../../src/kinds/rollout/load-pods.js';
import {
  deploymentPlan,
  loadDocumentFields,
  loadPlan,
  readRolloutSettings,
  rolloutFacts,
  rolloutSettings,
  type RolloutSettings,
} from '../../src/kinds/rollout/settings.js';
import { renderRolloutText } from '../../src/kinds/rollout/render/text.js';
import { loadArgs } from '../../src/platform/kube/load-pod.js';
import { loadSettings, loadSettingValues } from '../../src/probe/load/settings.js';
import { plainStyle } from '../../src/report/style.js';
import { WORK_MS_MAX } from '../../src/server/work-params.js';
import { readSettings, settingHelp, type SettingRow } from '../../src/util/setting-rows.js';
import { resolveScenario } from '../../src/workload/scenario.js';

/** The plan's `load` on a cluster: `--load-pods` resolved (auto from --rate, or as given). */
const kubeLoadPlan = (s: RolloutSettings) => loadPlan(s, chooseLoadPods(s.loadPods, s, 'kube'));

const rows = Object.entries(rolloutSettings) as Array<[keyof RolloutSettings, SettingRow<unknown>]>;
const loadRowNames = Object.keys(loadSettings(WORK_MS_MAX));

/** `draincheck rollout`'s options after parsing `args` (no action: nothing starts). */
function rolloutOptions(args: string[]): Record<string, unknown> {
  const command = rolloutCommand();
  command.parseOptions(args);
  return command.opts();
}

/** The command-line arguments that give a row its sample value. */
const sampleArgs = (row: SettingRow<unknown>): string[] =>
  row.arg === '' ? [row.flag] : [row.flag, row.sample];

/**
 * The settings a row means nothing without (its fact says nothing while they are off): given
 * with its sample, so the report has it to say.
 */
const companions: Record<string, string[]> = {
  '--retry-attempts': ['--retry', 'safe'],
  '--retry-backoff-ms': ['--retry', 'safe'],
  '--ingress-sync-ms': ['--ingress', 'nginx'],
  '--ingress-upstream-keepalive-timeout-ms': ['--ingress', 'nginx'],
  '--ingress-class': ['--ingress-url', 'http://ingress-nginx-controller.ingress-nginx.svc.cluster.local'],
  '--ws-reconnect': ['--protocol', 'ws'],
};

/** A whole document with these `deployment` and `load` fields (the rest as a run writes it). */
function documentWith(deployment: Record<string, unknown>, load: Record<string, unknown>): RolloutDocument {
  const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };
  return RolloutDocumentSchema.parse({
    schema: 'draincheck.rollout/v1',
    runId: 'r1',
    complete: true,
    incompleteReason: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
    tool: { name: 'draincheck', version: '0' },
    scenario: { ...resolveScenario({ name: 'drain' }), target: null },
    deployment,
    load,
    platform: { name: 'local', details: [] },
    rollout: { triggeredAtMs: 1000, completeAtMs: 2000, durationMs: 1000 },
    verdict: { kind: 'rolled', explanation: 'x' },
    pods: [],
    totals: { requests: 0, failed: 0, outcomes: {}, failures: {}, latency: empty, sendLag: empty },
    windows: {},
    failuresByPhase: {},
    timeline: { binMs: 100, bins: [] },
    records: { file: 'r.ndjson', written: 0, dropped: 0 },
  });
}

test('every rollout setting is a flag with its row’s help and default; its sample differs from the default', () => {
  const command = rolloutCommand();
  for (const [name, row] of rows) {
    const option = command.options.find((o) => o.long === row.flag);
    assert.ok(option, row.flag);
    assert.equal(option.attributeName(), name, `${row.flag} is read as ${name}`);
    assert.equal(option.description, settingHelp(row), row.flag);
    if (!row.repeatable && row.arg !== '')
      assert.match(option.description, new RegExp(`\\(default:? ${row.text(row.default) || '.+'}`), row.flag);
    // No commander default: a flag not given is its row's default, read by the row.
    assert.equal(option.defaultValue, undefined, row.flag);
    if (row.alternative) assert.ok(command.options.some((o) => o.long === row.alternative!.flag));
    const value = readRolloutSettings(rolloutOptions(sampleArgs(row)))[name];
    assert.notDeepEqual(value, row.default, `${row.flag}'s sample is not its default`);
  }
  // Not given: every value is its row's default.
  const defaults = readRolloutSettings(rolloutOptions([]));
  for (const [name, row] of rows) assert.deepEqual(defaults[name], row.default, row.flag);
});

test('every row reaches the plan, the document, the load Pod’s command line and the report', () => {
  const shipped = JSON.parse(
    readFileSync(new URL('../../../schema/rollout.v1.schema.json', import.meta.url), 'utf8'),
  ) as { properties: Record<string, { properties: Record<string, { description?: string }> }> };
  for (const [name, row] of rows) {
    const settings = readRolloutSettings(
      rolloutOptions([...sampleArgs(row), ...(companions[row.flag] ?? [])]),
    );
    const value = settings[name];
    // The flag's text through the row's schema, under the row's name.
    const expected =
      row.arg === '' ? row.schema.parse(true) : row.schema.parse(row.repeatable ? [row.sample] : row.sample);
    assert.deepEqual(value, expected, row.flag);
    const plan = planRollout(resolveScenario({ name: 'drain' }), {
      runId: 'r1',
      deployment: deploymentPlan(settings),
      load: kubeLoadPlan(settings),
    });
    const section = row.document?.section;
    // Off, a companion's setting is not said at all.
    if (companions[row.flag] && row.fact && section) {
      const off = readRolloutSettings(rolloutOptions(sampleArgs(row)));
      const offDoc = documentWith(
        { name: 'w', ...deploymentPlan(off) },
        loadDocumentFields(kubeLoadPlan(off)),
      );
      assert.ok(
        !rolloutFacts(offDoc).some((f) => f.name === name),
        `${row.flag} said without ${companions[row.flag]![0]}`,
      );
    }
    if (name === 'gzip') assert.equal(plan.load.gzip, true);
    if (section === 'load' || section === 'deployment') {
      // The plan carries it under the row's name …
      assert.deepEqual((plan[section] as Record<string, unknown>)[name], value, `plan.${section}.${name}`);
      // … the document's field, as run.ts writes it, the schema from the row …
      const fields = section === 'load' ? loadDocumentFields(plan.load) : { name: 'w', ...plan.deployment };
      const doc = documentWith(
        { name: 'w', ...deploymentPlan(settings) },
        loadDocumentFields(kubeLoadPlan(settings)),
      );
      assert.deepEqual((doc[section] as Record<string, unknown>)[name], row.document!.value(value));
      assert.deepEqual((fields as Record<string, unknown>)[name], row.document!.value(value));
      assert.equal(
        (RolloutDocumentSchema.shape[section].shape as Record<string, { description?: string }>)[name]
          ?.description,
        row.help,
      );
      assert.equal(shipped.properties[section]?.properties[name]?.description, row.help, `schema: ${name}`);
      // … and the report says it, in the text and on the page.
      const said = row.fact!(row.document!.value(value), doc[section]);
      assert.notEqual(said, '', `${row.flag}: its fact says something (a companion missing above?)`);
      assert.ok(renderRolloutText([doc], plainStyle).includes(said), `text: ${said}`);
      const html = renderRolloutHtml([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
      assert.ok(html.includes(`<dt>${name}</dt><dd>${said}</dd>`), `HTML: ${said}`);
    } else assert.equal(row.document, null, name);
    // The load's rows go to the load Pod as `draincheck load`'s flags, read back the same.
    if (loadRowNames.includes(name)) {
      const job = {
        namespace: 'ns',
        service: 'work',
        name: 'work-load',
        image: 'draincheck:test',
        idPrefix: 'drain-',
        ...loadSettingValues(plan.load),
      };
      const argv = loadArgs(job, 'http://10.96.0.12:80');
      assert.deepEqual(argv.slice(0, 3), ['load', '--service-url', 'http://10.96.0.12:80']);
      assert.ok(argv.includes(row.alternative?.value === value ? row.alternative.flag : row.flag), row.flag);
      const load = loadCommand();
      load.parseOptions(argv.slice(1));
      assert.deepEqual(readLoadFlags(load.opts()), loadSettingValues(plan.load), `load Pod: ${row.flag}`);
    }
  }
});

test('the load’s alternative switch (--new-connections) reaches the plan and the load Pod; both given is one line', () => {
  const settings = readRolloutSettings(rolloutOptions(['--new-connections']));
  assert.equal(settings.connections, 'new');
  const argv = loadArgs(
    {
      namespace: 'ns',
      service: 's',
      name: 'l',
      image: 'i',
      idPrefix: 'p',
      ...loadSettingValues(kubeLoadPlan(settings)),
    },
    'http://10.0.0.1:80',
  );
  assert.ok(argv.includes('--new-connections') && !argv.includes('--connections'));
  const load = loadCommand();
  load.parseOptions(argv.slice(1));
  assert.equal(readLoadFlags(load.opts()).connections, 'new');
  assert.throws(
    () => readRolloutSettings(rolloutOptions(['--connections', '4', '--new-connections'])),
    (e: unknown) =>
      isDraincheckError(e) &&
      e.message === '--connections and --new-connections ask for two things: give one',
  );
});

test('`draincheck load` and `draincheck rollout` share the load’s rows: the same flags, help and defaults', () => {
  const load = new Map(loadCommand().options.map((o) => [o.long, o]));
  const rollout = new Map(rolloutCommand().options.map((o) => [o.long, o]));
  for (const name of loadRowNames) {
    const row = rolloutSettings[name as keyof RolloutSettings] as SettingRow<unknown>;
    for (const flag of [row.flag, ...(row.alternative ? [row.alternative.flag] : [])]) {
      assert.equal(load.get(flag)?.description, rollout.get(flag)?.description, flag);
      assert.ok(load.get(flag), flag);
    }
  }
  // Not given: the load command's values are the rows' defaults, the rollout's too.
  assert.deepEqual(readLoadFlags({}), loadSettingValues(kubeLoadPlan(readRolloutSettings({}))));
});

test('a bad value is the row’s one line, DC_USAGE, under the flag’s name', () => {
  for (const [, row] of rows) {
    if (row.arg === '') continue;
    const text = row.badSample;
    assert.ok(text !== undefined, `a bad value for ${row.flag}`);
    assert.throws(
      () => readRolloutSettings(rolloutOptions([row.flag, text])),
      (e: unknown) =>
        isDraincheckError(e) &&
        e.code === 'DC_USAGE' &&
        e.message.startsWith(`${row.flag} must `) &&
        !e.message.includes('\n'),
      row.flag,
    );
  }
});

test('`draincheck load`’s own settings are rows too: a flag each with its default, a bad value its one line', () => {
  const command = loadCommand();
  for (const [name, row] of Object.entries(loadCommandSettings) as Array<[string, SettingRow<unknown>]>) {
    const option = command.options.find((o) => o.long === row.flag);
    assert.ok(option, row.flag);
    assert.equal(option.attributeName(), name);
    assert.equal(option.description, settingHelp(row), row.flag);
    assert.equal(option.defaultValue, undefined, `${row.flag}: the row's default, not commander's`);
    const given = loadCommand();
    given.parseOptions([row.flag, row.sample]);
    const value = readSettings(loadCommandSettings, given.opts())[name as keyof typeof loadCommandSettings];
    assert.deepEqual(value, row.schema.parse(row.sample), row.flag);
    assert.notDeepEqual(value, row.default, `${row.flag}'s sample is not its default`);
    const bad = loadCommand();
    bad.parseOptions([row.flag, row.badSample!]);
    assert.throws(
      () => readSettings(loadCommandSettings, bad.opts()),
      (e: unknown) =>
        isDraincheckError(e) &&
        e.code === 'DC_USAGE' &&
        e.message.startsWith(`${row.flag} must `) &&
        !e.message.includes('\n'),
      row.flag,
    );
  }
});

test("--ingress-sync-ms not given: each proxy's controller's own delay (nginx 0..3333, haproxy 0..100); given: as given", () => {
  assert.deepEqual(readRolloutSettings({ ingress: 'nginx' }).ingressSyncMs, { min: 0, max: 3333 });
  assert.deepEqual(readRolloutSettings({ ingress: 'haproxy' }).ingressSyncMs, { min: 0, max: 100 });
  assert.equal(readRolloutSettings({ ingress: 'haproxy', ingressSyncMs: '500' }).ingressSyncMs, 500);
  assert.deepEqual(readRolloutSettings({ ingress: 'nginx', ingressSyncMs: '0..3333' }).ingressSyncMs, {
    min: 0,
    max: 3333,
  });
});

test('--load-pods auto (the row’s default): resolved by the platform and --rate into the plan; the document keeps the number and how it was chosen; the report says both', () => {
  const rate = 2 * LOAD_POD_CAPACITY.pool + 1;
  const settings = readRolloutSettings(rolloutOptions(['--load-pods', 'auto', '--rate', String(rate)]));
  assert.equal(settings.loadPods, 'auto');
  const kube = kubeLoadPlan(settings);
  assert.equal(kube.loadPods, 3);
  const fields = loadDocumentFields(kube);
  assert.equal(fields.loadPods, 3);
  assert.deepEqual(fields.loadPodsChoice, {
    by: 'auto',
    rate,
    perPodRate: LOAD_POD_CAPACITY.pool,
    measuredFor: 'pool',
    needed: 3,
  });
  const doc = documentWith({ name: 'w', ...deploymentPlan(settings) }, fields);
  const said = `the load split over 3 load Pods (auto: ${rate}/s at ~${LOAD_POD_CAPACITY.pool}/s per Pod)`;
  assert.ok(renderRolloutText([doc], plainStyle).includes(said), said);
  const html = renderRolloutHtml([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.ok(html.includes(`<dt>loadPods</dt><dd>${said}</dd>`), said);
  // Given: recorded as given, said as before.
  const given = loadDocumentFields(kubeLoadPlan(readRolloutSettings(rolloutOptions(['--load-pods', '3']))));
  assert.deepEqual(given.loadPodsChoice, { by: 'given' });
  // The local platform: one generator, nothing chosen, nothing recorded beyond the number.
  const local = loadDocumentFields(loadPlan(settings, chooseLoadPods(settings.loadPods, settings, 'local')));
  assert.equal(local.loadPods, 1);
  assert.equal('loadPodsChoice' in local, false);
  const localDoc = documentWith({ name: 'w', ...deploymentPlan(settings) }, local);
  assert.ok(renderRolloutText([localDoc], plainStyle).includes('one load generator'));
  // Documents from before the fields still read: without loadPodsChoice the number alone is
  // said; without either, nothing of load Pods.
  const { loadPodsChoice: _c, ...older } = fields;
  const old = renderRolloutText(
    [documentWith({ name: 'w', ...deploymentPlan(settings) }, older)],
    plainStyle,
  );
  assert.ok(old.includes('the load split over 3 load Pods') && !old.includes('auto:'), old);
  const { loadPods: _n, ...oldest } = older;
  const oldestText = renderRolloutText(
    [documentWith({ name: 'w', ...deploymentPlan(settings) }, oldest)],
    plainStyle,
  );
  assert.ok(!/load Pods|load generator/.test(oldestText), oldestText);
});

test('the header says GET only for HTTP loads, and nothing of methods for an RPC or a WebSocket message', () => {
  const texts = (protocol: string) =>
    rolloutFacts({ load: { protocol, postShare: 0, retry: 'none' }, deployment: {} }).map((f) => f.text);
  assert.ok(texts('http1').includes('GET only'), texts('http1').join(' | '));
  assert.ok(texts('h2c').includes('GET only'), texts('h2c').join(' | '));
  for (const protocol of ['grpc', 'ws']) assert.ok(!texts(protocol).includes('GET only'), protocol);
});

test('the header names a retry policy in its protocol’s words: GET and POST for HTTP, neither for an RPC or a WebSocket message', () => {
  const texts = (protocol: string, retry: string) =>
    rolloutFacts({ load: { protocol, postShare: 0, retry }, deployment: {} }).map((f) => f.text);
  for (const protocol of ['http1', 'h2c']) {
    assert.ok(texts(protocol, 'safe').includes('retry safe (urllib3: before the send, or GET)'), protocol);
    assert.ok(texts(protocol, 'all').includes('retry all (every failure, POST too)'), protocol);
  }
  for (const protocol of ['grpc', 'ws']) {
    assert.ok(
      texts(protocol, 'safe').includes('retry safe (only what never left the client: none is idempotent)'),
      texts(protocol, 'safe').join(' | '),
    );
    assert.ok(texts(protocol, 'all').includes('retry all (every failure)'), protocol);
    assert.ok(!texts(protocol, 'all').some((t) => /GET|POST/.test(t)), protocol);
  }
});
