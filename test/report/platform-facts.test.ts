// Reports print the platform's own facts as it states them (run document `platform.details`),
// without asking which platform wrote them; documents from before `details` (their facts as
// fields of their own) read the same; a fact from a document is untrusted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { platformFact, platformFacts } from '../../src/experiment/platform-facts.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { renderRunTimeline } from '../../src/report/text.js';
import { sampleRun } from '../helpers/sample-runs.js';

const withPlatform = (platform: RunDocument['platform']): RunDocument => ({
  ...sampleRun('drain'),
  platform,
});
const heading = (doc: RunDocument) => renderRunTimeline(doc).split('\n')[0] ?? '';

test('a platform the reports have never heard of: its brief facts in the text heading, all of them in the HTML', () => {
  const doc = withPlatform({
    name: 'moon',
    namespace: 'crater',
    details: [
      { key: 'gravity', label: 'gravity', value: 1.62, note: 'm/s²', brief: true },
      { key: 'dusty', label: 'dusty', value: true },
    ],
  });
  assert.match(heading(doc), / on moon, gravity: 1\.62 {2}work /);
  const html = renderHtmlReport([doc]);
  assert.match(html, /<dt>gravity<\/dt><dd>1\.62 \(m\/s²\)<\/dd>/);
  assert.match(html, /<dt>dusty<\/dt><dd>yes<\/dd>/);
  assert.match(html, /<dt>namespace<\/dt><dd>crater<\/dd>/);
});

test('the embedded runtime as it writes its details: the same heading as before details existed', () => {
  const details = [
    { key: 'pid1', label: 'PID 1', value: true, note: 'unshare', brief: true },
    { key: 'serviceProxy', label: 'Service proxy', value: 'nftables', note: 'nft', brief: true },
    { key: 'timing', label: 'control-plane delays', value: 'endpointsDelayMs 5' },
  ];
  const old = withPlatform({
    name: 'local',
    pid1: true,
    pid1Reason: 'unshare',
    serviceProxy: 'nftables',
    serviceProxyReason: 'nft',
  });
  assert.equal(heading(withPlatform({ name: 'local', details })), heading(old));
  assert.match(heading(old), / on local, PID 1: yes, Service proxy: nftables {2}work /);
});

test('an old cluster document (fields, no details): context, server version and preStop form still show; its pid1 stays out of the heading', () => {
  const old = withPlatform({
    name: 'kube',
    pid1: true,
    pid1Reason: 'on a cluster',
    context: 'k3s',
    serverVersion: 'v1.24.0',
    namespace: 'draincheck-r1',
    preStopAction: 'exec',
    preStopActionReason: 'server v1.24.0 is older than 1.30',
  });
  assert.deepEqual(
    platformFacts(old.platform).map((f) => f.key),
    ['context', 'serverVersion', 'preStopAction'],
  );
  assert.equal(platformFact(old.platform, 'preStopAction')?.note, 'server v1.24.0 is older than 1.30');
  const line = heading({ ...old, scenario: { ...old.scenario, preStopSleepSeconds: 5 } });
  assert.match(
    line,
    / on kube {2}work .*preStop sleep 5 s as exec \(server v1\.24\.0 is older than 1\.30\)$/,
  );
  const html = renderHtmlReport([old]);
  assert.match(html, /<dt>server version<\/dt><dd>v1\.24\.0<\/dd>/);
  assert.match(html, /<dt>namespace<\/dt><dd>draincheck-r1<\/dd>/);
});

test('facts from a document are untrusted: a malformed one is left out, control characters never reach the terminal', () => {
  const doc = withPlatform({
    name: 'local',
    details: [
      { key: 'evil', label: 'E\u001b[31mVIL', value: 'x\u0007', brief: true },
      { key: 'odd', label: 'odd', value: { nested: true } },
      'not a fact',
    ],
  } as unknown as RunDocument['platform']);
  assert.deepEqual(
    platformFacts(doc.platform).map((f) => f.key),
    ['evil'],
  );
  const line = heading(doc);
  assert.ok(![...line].some((c) => c.charCodeAt(0) < 0x20), 'no control character');
  assert.match(line, /, E.*VIL: x/);
});
