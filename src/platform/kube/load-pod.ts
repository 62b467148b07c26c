// The load Pod of `draincheck rollout --platform kube`: `draincheck load` (the same image) sends
// open-loop load to the Service's ClusterIP from inside the cluster — so its requests take the
// Service path (kube-proxy, the CNI) as other Pods' requests do — and prints one record per
// request on stdout (NDJSON, src/probe/load/record-file.ts). The runner follows the Pod's log:
// every line is untrusted (bounded in length, parsed within a depth limit, checked field by
// field), and a record whose id is not the run's is dropped. Stopping it is deleting it: the
// kubelet's SIGTERM makes `draincheck load` offer no more, let the requests in flight finish
// and report them, and exit within the Pod's grace period.
import type { V1Pod } from '@kubernetes/client-node';
import { loadDefaults } from '../../probe/load/options.js';
import { loadArgv } from '../../probe/load/settings.js';
import { parseRecordLine, RECORD_FILE_KIND, RECORD_LINE_MAX_CHARS } from '../../probe/load/record-file.js';
import { parseJsonBounded, truncateText } from '../../util/bounded-json.js';
import { managedLabels } from '../../workload/labels.js';
import { containerResources, restrictedSecurityContext } from '../../workload/manifests.js';
import type { LoadItem, LoadJob } from '../types.js';

export const LOAD_CONTAINER = 'load';

/**
 * The load Pod's grace period: `draincheck load` waits for the requests in flight up to the
 * load's response time limit, then exits; a few seconds more for the last lines to be written.
 */
export const LOAD_GRACE_SECONDS = Math.ceil(loadDefaults.responseTimeoutMs / 1000) + 5;

/**
 * `draincheck load`'s arguments for a job (src/cli/commands/load.ts): the load's settings from
 * their rows (src/probe/load/settings.ts), which the load command reads back with the same rows.
 */
export function loadArgs(job: LoadJob, serviceUrl: string): string[] {
  return ['load', '--service-url', serviceUrl, ...loadArgv(job), '--id-prefix', job.idPrefix];
}

export function buildLoadPod(job: LoadJob, runId: string, serviceUrl: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    // The run's labels without the scenario label: the Service never selects it, and the
    // rollout's Pod watch (run and scenario) does not count it among the Deployment's Pods.
    metadata: { name: job.name, namespace: job.namespace, labels: managedLabels(runId, 'client') },
    spec: {
      restartPolicy: 'Never',
      enableServiceLinks: false,
      // It talks to the Service, never to the API server.
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: LOAD_GRACE_SECONDS,
      containers: [
        {
          name: LOAD_CONTAINER,
          image: job.image,
          imagePullPolicy: 'IfNotPresent',
          args: loadArgs(job, serviceUrl),
          resources: containerResources,
          securityContext: restrictedSecurityContext,
        },
      ],
    },
  };
}

/** The longest other line kept (an error message of the load client). */
const OTHER_LINE_MAX_CHARS = 500;

/**
 * One line of the load Pod's log: the header (`started`: the Service answered and the load
 * began), a record of the run (its id starts with the job's prefix), or any other line (cut).
 * A trailer or a line of the right form but the wrong shape is nothing (null).
 */
export function parseLoadLine(line: string, idPrefix: string, readAtMs: number): LoadItem | null {
  if (!line.startsWith('{')) {
    return line.trim() ? { kind: 'other', line: truncateText(line, OTHER_LINE_MAX_CHARS) } : null;
  }
  const record = parseRecordLine(line);
  if (record) return record.id.startsWith(idPrefix) ? { kind: 'record', record, readAtMs } : null;
  const parsed = parseJsonBounded(line, { maxChars: RECORD_LINE_MAX_CHARS, maxDepth: 4 });
  if (!parsed.ok) return null;
  const v = parsed.value as { kind?: unknown } | null;
  if (v && typeof v === 'object' && v.kind === RECORD_FILE_KIND) return { kind: 'started', readAtMs };
  return null;
}
