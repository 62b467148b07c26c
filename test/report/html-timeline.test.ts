// The timeline model: endpoint bands from successive slice conditions, the first terminating
// marker, lanes for every source (known or not), and scales shared across runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { conditionIntervals, endpointObservations } from '../../src/report/html/endpoint-bands.js';
import { buildTimeline, buildTimelines } from '../../src/report/html/index.js';
import type { RunTimeline, TimelineMark } from '../../src/report/html/index.js';
import { atOrigin } from '../../src/report/html/scale.js';
import { plotRange } from '../../src/report/html/svg-lane.js';
import { sampleRun, sampleRuns } from '../helpers/sample-runs.js';
import { runWithoutEndpointSlices } from '../helpers/sample-variants.js';

const bands = (t: RunTimeline, row: string) => {
  const found = t.lanes.flatMap((l) => l.rows).find((r) => r.name === row);
  assert.ok(found?.kind === 'band', `band row ${row}`);
  return found.intervals.map((i) => [i.state, i.from, i.to]);
};
const marks = (t: RunTimeline): TimelineMark[] =>
  t.lanes.flatMap((l) => l.rows).flatMap((r) => (r.kind === 'marks' ? r.marks : []));

test('ready / serving / terminating bands follow the slice conditions, with absence as its own state', () => {
  const t = buildTimeline(sampleRun('drain'), 0);
  // Slice events (drain): 6 ADDED empty, 1029 f/f/f, 1121 t/t/f, 1291 f/t/t, 1565 f/f/t, 4960 same, 5012 gone.
  assert.deepEqual(bands(t, 'ready'), [
    ['absent', 6, 1029],
    ['false', 1029, 1121],
    ['true', 1121, 1291],
    ['false', 1291, 5012],
    ['absent', 5012, t.end],
  ]);
  assert.deepEqual(bands(t, 'serving'), [
    ['absent', 6, 1029],
    ['false', 1029, 1121],
    ['true', 1121, 1565],
    ['false', 1565, 5012],
    ['absent', 5012, t.end],
  ]);
  assert.deepEqual(bands(t, 'terminating'), [
    ['absent', 6, 1029],
    ['false', 1029, 1291],
    ['true', 1291, 5012],
    ['absent', 5012, t.end],
  ]);
});

const slice = (id: string, at: number, type: string, name: string, conditions: object | null): RunEvent => ({
  id,
  at,
  source: 'endpointslice',
  type,
  data: { name, podEndpoint: conditions && { addresses: ['10.0.0.1'], conditions } },
});

test('the endpoint is tracked per slice; a DELETED slice or a missing condition is not read as false', () => {
  const events = [
    slice('e1', 10, 'ADDED', 'a', { ready: true, serving: true, terminating: false }),
    slice('e2', 20, 'ADDED', 'b', null), // another slice without this Pod changes nothing
    slice('e3', 30, 'MODIFIED', 'a', { ready: false, terminating: true }), // serving missing
    slice('e4', 40, 'DELETED', 'a', null),
  ];
  const observations = endpointObservations(events);
  const states = (name: 'ready' | 'serving' | 'terminating') =>
    conditionIntervals(observations, name, 50).map((i) => [i.state, i.from, i.to, i.eventId]);
  assert.deepEqual(states('serving'), [
    ['true', 10, 30, 'e1'],
    ['unknown', 30, 40, 'e3'],
    ['absent', 40, 50, 'e4'],
  ]);
  assert.deepEqual(states('ready'), [
    ['true', 10, 30, 'e1'],
    ['false', 30, 40, 'e3'],
    ['absent', 40, 50, 'e4'],
  ]);
});

test('the first terminating observation is its own, labelled mark with the conditions', () => {
  for (const [i, doc] of sampleRuns().entries()) {
    const t = buildTimeline(doc, i);
    const fte = doc.firstTerminatingEndpoint;
    assert.equal(t.firstTerminating?.eventId, fte.eventId);
    const mark = marks(t).find((m) => m.eventId === fte.eventId);
    assert.ok(mark, 'the slice event is drawn');
    assert.equal(mark.tone, 'key');
    // conclude() cites it in the verdict's evidence, so its label starts with its event id.
    assert.ok(doc.verdict.evidence.includes(fte.eventId!));
    assert.equal(mark.label, `${fte.eventId} · first terminating: ready=false serving=true terminating=true`);
    assert.ok(
      mark.priority >
        Math.max(
          ...marks(t)
            .filter((m) => m !== mark && !m.evidence)
            .map((m) => m.priority),
        ),
    );
  }
});

test('evidence marks carry their id in the label; the exit comes from the document', () => {
  const doc = sampleRun('default');
  const t = buildTimeline(doc, 2);
  for (const id of doc.verdict.evidence) {
    const mark = marks(t).find((m) => m.eventId === id);
    assert.ok(mark?.evidence, id);
    assert.ok(mark.label.startsWith(`${id} · `), mark.label);
  }
  assert.equal(t.exit?.code, 137);
  assert.equal(t.exit?.text, 'exit 137 Error');
  assert.equal(t.exit?.eventId, doc.events.find((e) => e.at === doc.exit.at && e.source === 'pod')?.id);
  assert.equal(t.key, 'r3');
});

test('every source lands in its lane; unknown types become generic marks; no events, "not observed"', () => {
  const doc = runWithoutEndpointSlices();
  doc.events.push(
    { id: 'e900', at: 1500, source: 'kubelet', type: 'container-started', data: {} },
    { id: 'e901', at: 1600, source: 'server', type: 'something-new', data: { x: 1 } },
    { id: 'e902', at: 1700, source: 'events', type: 'Killing', data: { message: 'Stopping container work' } },
  );
  const t = buildTimeline(doc, 0);
  const lane = (id: string) =>
    t.lanes.find((l) => l.rows.some((r) => r.kind === 'marks' && r.marks.some((m) => m.eventId === id)))
      ?.name;
  assert.equal(lane('e900'), 'pod');
  assert.equal(lane('e901'), 'server');
  assert.equal(lane('e902'), 'pod');
  assert.equal(marks(t).find((m) => m.eventId === 'e900')?.label, 'container-started');
  assert.equal(marks(t).find((m) => m.eventId === 'e902')?.label, 'Event Killing');
  const endpoint = t.lanes.find((l) => l.name === 'endpoint')!;
  assert.equal(endpoint.note, 'not observed: no EndpointSlice events');
  assert.deepEqual(bands(t, 'ready'), []);
  assert.equal(t.firstTerminating, null);
  assert.deepEqual(
    t.lanes.map((l) => l.name),
    ['runner', 'client', 'server', 'endpoint', 'pod'],
  );
  const deleteMark = marks(t).find((m) => m.event.type === 'delete-requested');
  assert.equal(lane(deleteMark!.eventId), 'pod');
});

test('all runs share one overview scale and one close-up window relative to each DELETE', () => {
  const { timelines, scale, closeUp } = buildTimelines(sampleRuns(), plotRange);
  const latest = Math.max(...timelines.map((t) => t.end));
  assert.equal(scale.domain[0], 0);
  assert.ok(scale.domain[1] >= latest && scale.domain[1] < latest * 1.3, `${scale.domain[1]} for ${latest}`);
  assert.equal(scale.x(0), plotRange[0]);
  assert.equal(scale.x(scale.domain[1]), plotRange[1]);
  assert.ok(Math.abs(scale.x(1000) - scale.x(0) - (scale.x(2000) - scale.x(1000))) < 1e-9, 'linear');
  assert.ok(closeUp, 'every run deleted its Pod');
  assert.equal(closeUp.domain[0], -100);
  assert.ok(closeUp.domain[1] >= 400 && closeUp.domain[1] <= 2000);
  // Same ms after the DELETE, same x, whatever each run's DELETE time.
  assert.equal(atOrigin(closeUp, 1185).x(1185 + 93), atOrigin(closeUp, 4000).x(4000 + 93));
  assert.equal(
    atOrigin(closeUp, 1185).x(1185),
    plotRange[0] + (plotRange[1] - plotRange[0]) * (100 / (closeUp.domain[1] + 100)),
  );
});
