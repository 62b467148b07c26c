// Opt-in end to end on a real cluster: `draincheck lab --platform kube` as a user runs it.
// Set DRAINCHECK_E2E_KUBECONFIG to a kubeconfig whose cluster has the draincheck image
// (docs/REAL-CLUSTER.md); optionally DRAINCHECK_E2E_CONTEXT and DRAINCHECK_E2E_IMAGE.
// Without it the test is skipped, and its name says why.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { createKubeApi } from '../../src/platform/kube/api.js';
import { cleanupSelector } from '../../src/platform/kube/cleanup.js';
import { loadKubeConnection } from '../../src/platform/kube/connection.js';
import { KubeResources } from '../../src/platform/kube/resources.js';
import { cliPath } from '../helpers/lab-process.js';
import { platformFact } from '../../src/experiment/platform-facts.js';

const kubeconfig = process.env.DRAINCHECK_E2E_KUBECONFIG;
const context = process.env.DRAINCHECK_E2E_CONTEXT;
const image = process.env.DRAINCHECK_E2E_IMAGE;
const skip = kubeconfig ? false : 'set DRAINCHECK_E2E_KUBECONFIG to run it on a real cluster';

test(
  `e2e: draincheck lab --platform kube on a real cluster${skip ? ` (skipped: ${skip})` : ''}`,
  { skip, timeout: 15 * 60_000 },
  async (t) => {
    const out = mkdtempSync(path.join(tmpdir(), 'draincheck-e2e-'));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const args = [
      cliPath,
      'lab',
      '--platform',
      'kube',
      '--kubeconfig',
      kubeconfig ?? '',
      '--json',
      '--out',
      out,
    ];
    if (context) args.push('--context', context);
    if (image) args.push('--image', image);
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill('SIGINT'));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, `draincheck lab exited ${code}: ${stderr}`);

    const { documents } = JSON.parse(stdout) as { documents: RunDocument[] };
    const byPolicy = new Map(documents.map((d) => [d.scenario.onSigterm, d]));
    for (const doc of documents) {
      assert.equal(doc.complete, true, `${doc.scenario.name}: ${doc.incompleteReason}`);
      assert.equal(doc.platform.name, 'kube');
      assert.match(String(platformFact(doc.platform, 'serverVersion')?.value), /^v\d+\.\d+/);
      assert.equal(doc.acceptance.proven, true);
      assert.equal(doc.firstTerminatingEndpoint.observed, true);
      assert.equal(doc.firstTerminatingEndpoint.conditions?.ready, false);
      assert.equal(doc.firstTerminatingEndpoint.conditions?.terminating, true);
    }
    assert.equal(byPolicy.get('drain')?.verdict.kind, 'accepted-request-finished');
    assert.equal(byPolicy.get('exit')?.verdict.kind, 'accepted-request-cut');
    // Node as PID 1 with no SIGTERM handler: SIGKILL at the end of the grace period.
    assert.equal(byPolicy.get('default')?.exit.code, 137);

    // Each run deleted its namespace (it may still be terminating, never left active).
    const connection = loadKubeConnection({ kubeconfig, context });
    const resources = new KubeResources(createKubeApi(connection.kubeConfig), connection);
    for (const doc of documents) {
      const left = await resources.listNamespaces(cleanupSelector(doc.runId));
      assert.ok(
        left.items.every((ns) => ns.metadata?.deletionTimestamp),
        `namespace of run ${doc.runId} deleted`,
      );
    }
  },
);
