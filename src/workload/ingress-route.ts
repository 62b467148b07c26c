// `rollout --platform kube --ingress-url`: the one Ingress a rollout creates in its namespace so
// that the user's own ingress controller routes a host of the run's own to the run's Service.
// networking.k8s.io/v1 (GA since Kubernetes 1.19, so on every server draincheck supports, ≥ 1.24):
// one rule whose `host` is unique to the run and the rolled Deployment, one Prefix `/` path to
// the Service's port, and `spec.ingressClassName` when --ingress-class names the class (else the
// cluster's default IngressClass takes it, as the API's admission sets it). The load Pods send
// every request to the controller's URL with that Host header (src/probe/load/http1-pool.ts).
import { isIP } from 'node:net';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';

/**
 * The run's hosts end in `.invalid` (RFC 6761 §6.4: never resolves, never anyone's), so the rule
 * can never take traffic meant for a real host of the user's, and a browser pointed at it fails.
 */
export const INGRESS_HOST_SUFFIX = 'draincheck.invalid';

/** A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, ≤ 63. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The run's host: `<name>.<runId>.draincheck.invalid` — unique per run (its id) and per
 * compared policy (the Deployment's name). The API validates `rules[].host` as a DNS-1123
 * subdomain (k8s.io/apimachinery validation.IsDNS1123Subdomain: labels of [a-z0-9-], each ≤ 63,
 * the whole ≤ 253) and refuses an IP address (pkg/apis/networking/validation
 * validateIngressRules); both are checked here, so a bad name fails before anything is created.
 */
export function ingressHost(name: string, runId: string): string {
  const host = `${name}.${runId}.${INGRESS_HOST_SUFFIX}`;
  if (!isIngressHost(host)) throw new Error(`ingress host ${host} is not a DNS-1123 subdomain`);
  return host;
}

/** What the API's validation of `rules[].host` accepts (without a wildcard, which the run never uses). */
export function isIngressHost(host: string): boolean {
  const labels = host.split('.');
  return (
    host.length <= 253 &&
    labels.every((l) => l.length <= 63 && DNS1123_LABEL.test(l)) &&
    // An IP address is refused as a host (the API's validation.IsValidIP).
    isIP(host) === 0
  );
}

export interface IngressRoute {
  ingress: V1Ingress;
  host: string;
}

/**
 * The Ingress for the run's Service: its name is the Service's, its labels the Service's (the
 * run's, so `draincheck cleanup` finds it), one rule for the run's host, Prefix `/` to the
 * Service's first port by number.
 */
export function buildIngressRoute(
  service: V1Service,
  runId: string,
  ingressClass: string | null,
): IngressRoute {
  const name = service.metadata?.name ?? '';
  const host = ingressHost(name, runId);
  const labels = { ...service.metadata?.labels };
  const port = service.spec?.ports?.[0]?.port ?? 80;
  const ingress: V1Ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      ...(service.metadata?.namespace ? { namespace: service.metadata.namespace } : {}),
      labels,
    },
    spec: {
      ...(ingressClass !== null ? { ingressClassName: ingressClass } : {}),
      rules: [
        {
          host,
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: port } } } },
            ],
          },
        },
      ],
    },
  };
  return { ingress, host };
}
