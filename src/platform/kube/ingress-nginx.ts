// `rollout --platform kube --ingress nginx` (issue 25): draincheck's own nginx on the cluster — a
// Deployment of one replica running `draincheck ingress-nginx` (Debian's nginx, the draincheck
// image) and a ClusterIP Service in front of it, in the run's namespace, both labelled as the
// run's (so `draincheck cleanup` finds them) and deleted by UID.
//
// The model is ingress-nginx's `nginx.ingress.kubernetes.io/service-upstream: "true"`: nginx
// proxies to the run's Service's ClusterIP, not to the Pods' addresses. Programming nginx with
// the endpoints would need a controller watching EndpointSlices from inside the cluster — a
// ServiceAccount and a Role draincheck would have to create, more privilege than its manifests
// grant. What that costs the evidence: kube-proxy picks the Pod per upstream *connection*, nginx's
// upstream keep-alive pins requests to that Pod until the connection closes, and nginx's log
// names the ClusterIP, never the Pod — which Pod took a failed attempt comes from the Pods'
// journals (the request id), and is unknown when none accepted it.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { GENERATION_PATH, boundedLineBatches } from '../ingress/evidence.js';
import { INGRESS_LINE_MAX_CHARS } from '../ingress/nginx-log.js';
import { joinNginxLines, keepaliveTimeoutText } from '../ingress/nginx-config.js';
import type { IngressEvidence } from '../types.js';
import { COMPONENT_LABEL, managedLabels } from '../../workload/labels.js';
import { containerResources, restrictedSecurityContext } from '../../workload/manifests.js';

export const INGRESS_CONTAINER = 'nginx';
/** The label that selects the nginx Pod (its Deployment's selector and its Service's). */
export const INGRESS_SELECTOR_LABEL = 'draincheck.dev/ingress';
/** The container's port: above 1024, so the non-root user may bind it. */
export const INGRESS_CONTAINER_PORT = 8080;
/** The kubelet's SIGTERM becomes nginx's graceful quit: the requests in flight finish, within this. */
const INGRESS_GRACE_SECONDS = 15;
/** Lines spooled from the nginx Pod's log at most (the join reads at most as many anyway). */
const SPOOL_LINES_MAX = 5_000_000;
/** And bytes (a log line is ~100 bytes: 5 million of them; a Pod's log is untrusted). */
const SPOOL_BYTES_MAX = 512 * 1024 * 1024;

/** The nginx Deployment's and Service's name for the run's Service `service`. */
export const ingressName = (service: string): string => `${service.slice(0, 56)}-nginx`;

export interface IngressObjects {
  service: V1Service;
  deployment: V1Deployment;
}

/**
 * The nginx Deployment and its Service. `upstream`: the run's Service as `<ClusterIP>:<port>`
 * (the API's answer to its creation). Least privilege as the load Pod: non-root, no privilege
 * escalation, no capability, a read-only root filesystem with an emptyDir on /tmp for nginx's
 * configuration, pid and temp files; no Service account token (it never talks to the API).
 */
export function buildIngressObjects(options: {
  namespace: string;
  service: string;
  runId: string;
  image: string;
  upstream: string;
  retryNonIdempotent: boolean;
  /** nginx's upstream keepalive_timeout (ms); absent: its 60 s default, no flag sent. */
  upstreamKeepaliveTimeoutMs?: number;
}): IngressObjects {
  const name = ingressName(options.service);
  const labels = { ...managedLabels(options.runId, 'client'), [COMPONENT_LABEL]: 'ingress' };
  const selector = { [INGRESS_SELECTOR_LABEL]: name };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: options.namespace, labels },
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: 80, targetPort: INGRESS_CONTAINER_PORT, protocol: 'TCP' }],
    },
  };
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: options.namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...labels, ...selector } },
        spec: {
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: INGRESS_GRACE_SECONDS,
          containers: [
            {
              name: INGRESS_CONTAINER,
              image: options.image,
              imagePullPolicy: 'IfNotPresent',
              args: [
                'ingress-nginx',
                '--upstream',
                options.upstream,
                // Its port: PORT, else 8080 (INGRESS_CONTAINER_PORT) — no flag, so a runtime that
                // remaps the Pod's port (the embedded one) can say so through PORT.
                ...(options.retryNonIdempotent ? ['--retry-non-idempotent'] : []),
                ...(options.upstreamKeepaliveTimeoutMs !== undefined
                  ? ['--upstream-keepalive-timeout-ms', String(options.upstreamKeepaliveTimeoutMs)]
                  : []),
              ],
              ports: [{ name: 'http', containerPort: INGRESS_CONTAINER_PORT, protocol: 'TCP' }],
              // Answered by nginx itself (`return 200`), never proxied: ready once nginx serves.
              readinessProbe: {
                httpGet: { path: GENERATION_PATH, port: INGRESS_CONTAINER_PORT },
                periodSeconds: 2,
                failureThreshold: 3,
              },
              resources: containerResources,
              securityContext: restrictedSecurityContext,
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }],
        },
      },
    },
  };
  return { service, deployment };
}

/** The ingress section's `model` for the cluster's nginx. */
export function ingressModelText(
  upstream: string,
  retryNonIdempotent: boolean,
  upstreamKeepaliveTimeoutMs?: number,
): string {
  return `Debian's nginx in a Deployment of draincheck's own on the cluster (draincheck ingress-nginx), in ingress-nginx's service-upstream mode (nginx.ingress.kubernetes.io/service-upstream: "true"): its one upstream is the run's Service's ClusterIP ${upstream}, so kube-proxy picks the Pod per upstream connection and nginx's upstream keep-alive pins requests to that Pod until the connection closes; its log names the ClusterIP, not the Pod — which Pod took a failed attempt comes from the Pods' journals (the request id), unknown when none accepted it. (Programming nginx with the Pods' endpoints would need a controller watching EndpointSlices in the cluster: a ServiceAccount and a Role draincheck does not create.) ingress-nginx's defaults: proxy_next_upstream error timeout${retryNonIdempotent ? ' non_idempotent' : ''} (3 tries — with the ClusterIP its one server, no other to pass a failed attempt to), upstream keepalive 320 / ${keepaliveTimeoutText(upstreamKeepaliveTimeoutMs)} / 10000 requests, proxy_connect_timeout 5 s, proxy_read_timeout 60 s`;
}

/** nginx's error-log lines (`2026/01/02 03:04:05 [error] …`) and the command's own, in the shared log. */
const NOT_ACCESS_LINE = /^(\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} \[|draincheck ingress-nginx: )/;

/**
 * The nginx Pod's log, spooled to a file as it arrives (its lines are untrusted: each already
 * bounded by the log reader to INGRESS_LINE_MAX_CHARS, at most SPOOL_LINES_MAX of them and
 * SPOOL_BYTES_MAX in all), and
 * joined at the end with the embedded runtime's parsing (joinNginxLines): the access log (stdout)
 * and the error log (stderr) are one stream here, so it is given twice — each pass takes its own
 * lines. No address maps to a Pod (the one upstream is the ClusterIP): every attempt's podUid is null.
 */
export class IngressLogSpool {
  private readonly dir = mkdtempSync(join(tmpdir(), 'draincheck-ingress-log-'));
  private readonly path = join(this.dir, 'nginx.log');
  private readonly out = createWriteStream(this.path, { encoding: 'utf8' });
  private lines = 0;
  private bytes = 0;
  /** Lines beyond the bounds: counted in the evidence's `dropped`, never written. */
  dropped = 0;

  /** Resolves once the file took it (backpressure reaches the log stream, not the memory). */
  async add(line: string): Promise<void> {
    const text = `${line.length > INGRESS_LINE_MAX_CHARS ? line.slice(0, INGRESS_LINE_MAX_CHARS) : line}\n`;
    if (this.lines >= SPOOL_LINES_MAX || this.bytes + text.length > SPOOL_BYTES_MAX) {
      this.dropped += 1;
      return;
    }
    this.lines += 1;
    this.bytes += text.length;
    if (!this.out.write(text)) await once(this.out, 'drain');
  }

  async evidence(originWallMs: number, watch?: ReadonlySet<string>): Promise<IngressEvidence> {
    if (!this.out.closed) {
      this.out.end();
      await once(this.out, 'close').catch(() => undefined);
    }
    const evidence = await joinNginxLines(
      boundedLineBatches(this.path),
      boundedLineBatches(this.path),
      originWallMs,
      new Map(),
      watch,
      (line) => NOT_ACCESS_LINE.test(line),
    );
    return { ...evidence, dropped: evidence.dropped + this.dropped };
  }

  dispose(): void {
    this.out.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
