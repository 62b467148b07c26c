// The sample runs the report tests render are valid run documents: they pass the shipped JSON
// Schema (ajv, draft 2020-12) and the zod schema, and are shaped like real runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import { conclude } from '../../src/experiment/conclude.js';
import { RunDocumentSchema, type RunDocument } from '../../src/experiment/run-document.js';
import { fixturesDir } from '../helpers/fake-apiserver/recorded.js';
import { sampleRuns } from '../helpers/sample-runs.js';
import { hostileRun, interruptedRun, runWithoutEndpointSlices } from '../helpers/sample-variants.js';

const schema = JSON.parse(
  readFileSync(new URL('../../../schema/run.v1.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
// ajv is CommonJS: under NodeNext its class is the module's `default` export property.
const validate = new Ajv2020.default({ allErrors: true, strict: false }).compile(schema);

const all = (): Array<[string, RunDocument]> => [
  ...sampleRuns().map((d): [string, RunDocument] => [d.scenario.name, d]),
  ['interrupted', interruptedRun()],
  ['hostile', hostileRun()],
  ['without endpoint slices', runWithoutEndpointSlices()],
];

test('every sample run validates against schema/run.v1.schema.json and the zod schema', () => {
  for (const [name, doc] of all()) {
    const json = JSON.parse(JSON.stringify(doc)) as unknown;
    assert.ok(validate(json), `${name}: ${JSON.stringify(validate.errors, null, 2)}`);
    assert.doesNotThrow(() => RunDocumentSchema.parse(json), name);
  }
});

test('the three lab runs have realistic event counts, ordered events and known evidence', () => {
  const runs = sampleRuns();
  assert.deepEqual(
    runs.map((d) => [d.scenario.name, d.verdict.kind, d.exit.code]),
    [
      ['exit', 'accepted-request-cut', 0],
      ['drain', 'accepted-request-finished', 0],
      ['default', 'accepted-request-finished', 137],
    ],
  );
  for (const doc of runs) {
    assert.ok(
      doc.events.length >= 60 && doc.events.length <= 120,
      `${doc.scenario.name}: ${doc.events.length}`,
    );
    doc.events.forEach((e, i) => {
      assert.equal(e.id, `e${i + 1}`);
      if (i > 0) assert.ok(e.at >= doc.events[i - 1]!.at, `${e.id} is in time order`);
    });
    const ids = new Set(doc.events.map((e) => e.id));
    for (const id of doc.verdict.evidence) assert.ok(ids.has(id), `evidence ${id} exists`);
    assert.ok(ids.has(doc.firstTerminatingEndpoint.eventId ?? ''), 'the first terminating event exists');
  }
});

test('every sample document carries exactly the conclusions conclude() derives from its events', () => {
  const products: Array<[string, RunDocument]> = [
    ...sampleRuns().map((d): [string, RunDocument] => [d.scenario.name, d]),
    ['interrupted', interruptedRun()],
    ['without endpoint slices', runWithoutEndpointSlices()],
  ];
  for (const [name, doc] of products) {
    const derived = conclude({
      events: doc.events,
      podName: doc.pod.name,
      namespace: doc.pod.namespace,
      serviceName: doc.service.name,
      workId: doc.scenario.workId,
    });
    for (const [field, value] of Object.entries(derived)) {
      assert.deepEqual(doc[field as keyof typeof derived], value, `${name}: ${field}`);
    }
  }
});

// The sample script's delays (sample-events.ts) against the recorded cluster: each one lies
// within the range the twelve recordings of test/fixtures/kube-api/timings.json show.
interface Recording {
  deleteCallRoundTripMs: number;
  msToFirstEndpointTerminating: number;
  msToContainerTerminatedStatus: number;
  msToPodDeletedEvent: number;
  msToEndpointRemoved: number;
  podSequence: Array<{ dtMs: number; deletionTimestamp: string | null }>;
}
const recordings = Object.values(
  JSON.parse(readFileSync(`${fixturesDir}timings.json`, 'utf8')) as Record<string, Recording>,
);
const recorded = (measure: (r: Recording) => number): [number, number] => {
  const values = recordings.map(measure);
  return [Math.min(...values), Math.max(...values)];
};

test("the sample timings lie within the recorded cluster's (timings.json)", () => {
  assert.equal(recordings.length, 12);
  const ranges = {
    'DELETE round trip': recorded((r) => r.deleteCallRoundTripMs),
    'first Pod event with a deletionTimestamp': recorded(
      (r) => r.podSequence.find((p) => p.deletionTimestamp !== null)!.dtMs,
    ),
    'first terminating endpoint': recorded((r) => r.msToFirstEndpointTerminating),
    'terminated status → Pod DELETED': recorded(
      (r) => r.msToPodDeletedEvent - r.msToContainerTerminatedStatus,
    ),
    'Pod DELETED → endpoint removed': recorded((r) => r.msToEndpointRemoved - r.msToPodDeletedEvent),
  };
  for (const doc of sampleRuns()) {
    const deleteAt = doc.deletion.at!;
    const find = (
      source: string,
      type: string,
      where: (e: RunDocument['events'][number]) => boolean = () => true,
    ) => doc.events.find((e) => e.source === source && e.type === type && where(e))!;
    const terminatedAt = find('pod', 'MODIFIED', (e) =>
      Boolean((e.data.containerState as { terminated?: unknown } | null)?.terminated),
    ).at;
    const deletedAt = find('pod', 'DELETED').at;
    const removedAt = find(
      'endpointslice',
      'MODIFIED',
      (e) => e.at > deletedAt && e.data.podEndpoint === null,
    ).at;
    const measured = {
      'DELETE round trip': find('runner', 'delete-returned').at - deleteAt,
      'first Pod event with a deletionTimestamp':
        find('pod', 'MODIFIED', (e) => e.data.deletionTimestamp !== null).at - deleteAt,
      'first terminating endpoint': doc.firstTerminatingEndpoint.at! - deleteAt,
      'terminated status → Pod DELETED': deletedAt - terminatedAt,
      'Pod DELETED → endpoint removed': removedAt - deletedAt,
    };
    for (const [what, [min, max]] of Object.entries(ranges)) {
      const ms = measured[what as keyof typeof measured];
      assert.ok(ms >= min && ms <= max, `${doc.scenario.name}: ${what} ${ms} ms, recorded ${min}..${max} ms`);
    }
    assert.ok(doc.acceptance.at! < deleteAt, 'acceptance is proven before the DELETE');
  }
});
