// The rollout's settings as rows (src/util/setting-rows.ts): the load's rows it shares with
// `draincheck load` (src/probe/load/settings.ts), then its own — the windows around the rollout,
// the Deployment's strategy, the CI gate, the compared policies. From this table come
// `draincheck rollout`'s flags and `--help` (src/cli/commands/rollout.ts), their validation,
// the plan (`load` and `deployment`), the document's `load` and `deployment` fields
// (./document.ts), the load Pod's arguments (src/platform/kube/load-pod.ts) and the report's
// facts (./text.ts, ./html.ts). Adding a setting: docs/ARCHITECTURE.md, "Adding a rollout setting".
import { z } from 'zod';
import { INGRESS_SYNC_MS_DEFAULTS } from '../../platform/types.js';
import { UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS } from '../../platform/ingress/nginx-config.js';
import { quote } from '../../errors.js';
import { loadSettings, loadSettingValues } from '../../probe/load/settings.js';
import { WORK_MS_MAX } from '../../server/work-params.js';
import { integerSchema } from '../../util/integer.js';
import {
  documentFields,
  documentShape,
  flagAttribute,
  readSettings,
  setting,
  type SettingValues,
} from '../../util/setting-rows.js';
import { failureClasses, type FailureClass } from '../../probe/load/record.js';
import {
  LOAD_POD_CAPACITY,
  LOAD_PODS_MAX,
  loadPodsChoiceText,
  type LoadPodsChoice,
  type LoadPodsSetting,
} from './load-pods.js';

export interface FailureLimit {
  /** null: every failure counts. */
  failureClass: FailureClass | null;
  max: number;
}

/** One `--max-failures` value: `N` or `CLASS=N` (the message names the value otherwise). */
export const failureLimitSchema = z.string().transform((text, ctx): FailureLimit => {
  const m = /^\s*(?:([a-z0-9-]+)\s*=\s*)?(\d{1,9})\s*$/.exec(text);
  const failureClass = m?.[1] ?? null;
  if (m && (failureClass === null || (failureClasses as readonly string[]).includes(failureClass)))
    return { failureClass: failureClass as FailureClass | null, max: Number(m[2]) };
  ctx.addIssue({
    code: 'custom',
    message: `--max-failures must be N or CLASS=N with CLASS one of ${failureClasses.join(', ')}, got ${quote(text)}`,
  });
  return z.NEVER;
});

/** A limit as its flag's text: `3` or `accepted-cut=0`. */
export const failureLimitText = ({ failureClass, max }: FailureLimit): string =>
  failureClass === null ? String(max) : `${failureClass}=${max}`;

export { LOAD_PODS_MAX };

/** The longest before- or after-window: an hour. */
export const WINDOW_MS_MAX = 3_600_000;

/** A rollout replaces Pods that may be working 2 s: a grace period well above that (the scenario's). */
export const ROLLOUT_GRACE_SECONDS = 30;

export const comparePolicies = ['exit', 'drain', 'drain+prestop', 'default'] as const;

export const ingressKinds = ['none', 'nginx', 'haproxy'] as const;
export type IngressKind = (typeof ingressKinds)[number];

/**
 * --lb-deregistration-ms's named values, from published measurements: an AWS NLB with IP
 * targets keeps opening new connections to a deregistering target for at least 2 minutes,
 * whatever its deregistration delay (kubernetes-sigs/aws-load-balancer-controller#2366, timed
 * with raw TCP; the same ~120 s in aws/containers-roadmap#470).
 */
export const LB_DEREGISTRATION = { awsNlb: 120_000 } as const;
/** The longest --lb-deregistration-ms: 5 minutes (an AWS target group's default deregistration delay, 300 s). */
export const LB_DEREGISTRATION_MAX_MS = 300_000;

/** A delay fixed or drawn from a range each time (ms). */
export type SyncDelay = number | { min: number; max: number };
const syncDelayText = (v: SyncDelay): string => (typeof v === 'number' ? String(v) : `${v.min}..${v.max}`);

/** `100` or `0..3333` (ms, at most 60 s), as --proxy-sync-ms reads it. */
function syncDelaySchema(flag: string) {
  return z.string().transform((text, ctx): SyncDelay => {
    const m = /^\s*(\d{1,5})\s*(?:\.\.\s*(\d{1,5})\s*)?$/.exec(text);
    const min = m ? Number(m[1]) : NaN;
    const max = m?.[2] === undefined ? min : Number(m[2]);
    if (m && min <= max && max <= 60_000) return min === max ? min : { min, max };
    ctx.addIssue({
      code: 'custom',
      message: `${flag} must be ms (0 to 60000) or a range MIN..MAX with MIN <= MAX, got ${quote(text)}`,
    });
    return z.NEVER;
  });
}
export type ComparePolicy = (typeof comparePolicies)[number];
/** The longest --ingress-url. */
export const INGRESS_URL_MAX_CHARS = 2000;

/**
 * `--ingress-url`: an http:// origin (a path of `/` at most: the Ingress routes `/` on the run's
 * own host), no credentials, no query. https is refused: the load's HTTP/1.1 client speaks
 * cleartext, and an ingress's TLS would need its certificate for the run's host.
 */
const ingressUrlSchema = z.string().transform((text, ctx): string => {
  const t = text.trim();
  let url: URL | null = null;
  try {
    url = new URL(t);
  } catch {
    url = null;
  }
  if (
    url &&
    t.length <= INGRESS_URL_MAX_CHARS &&
    url.protocol === 'http:' &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    url.pathname === '/'
  )
    return url.origin;
  ctx.addIssue({
    code: 'custom',
    message: `--ingress-url must be an http:// URL of your ingress controller with no path, query or credentials (e.g. http://ingress-nginx-controller.ingress-nginx.svc.cluster.local), got ${quote(text)}`,
  });
  return z.NEVER;
});

/** `--max-surge 1` / `--max-surge 25%`: Kubernetes' IntOrString. */
function intOrPercentSchema(flag: string) {
  return z.string().transform((text, ctx): number | string => {
    const t = text.trim();
    if (/^\d{1,6}%$/.test(t) && Number.parseInt(t, 10) <= 100) return t;
    if (/^\d{1,6}$/.test(t)) return Number(t);
    ctx.addIssue({
      code: 'custom',
      message: `${flag} must be a whole number or a percentage (e.g. 1 or 25%), got ${quote(text)}`,
    });
    return z.NEVER;
  });
}

/** `--compare exit,drain,drain+prestop`: known policies, each once, at least two. */
const compareSchema = z.string().transform((text, ctx): ComparePolicy[] | null => {
  const items = text.split(',').map((s) => s.trim());
  const bad = items.find((i) => !(comparePolicies as readonly string[]).includes(i));
  if (bad === undefined && items.length >= 2 && new Set(items).size === items.length)
    return items as ComparePolicy[];
  ctx.addIssue({
    code: 'custom',
    message: `--compare must list two or more of ${comparePolicies.join(', ')}, each once, separated by commas, got ${quote(text)}`,
  });
  return z.NEVER;
});

/** `--load-pods 3` or `--load-pods auto` (./load-pods.ts). */
const loadPodsSchema = z.string().transform((text, ctx): LoadPodsSetting => {
  const t = text.trim();
  if (t === 'auto') return 'auto';
  if (/^\d{1,2}$/.test(t) && Number(t) >= 1 && Number(t) <= LOAD_PODS_MAX) return Number(t);
  ctx.addIssue({
    code: 'custom',
    message: `--load-pods must be auto or an integer from 1 to ${LOAD_PODS_MAX}, got ${quote(text)}`,
  });
  return z.NEVER;
});

const windowRow = (flag: '--before-ms' | '--after-ms', help: string, fact: (v: number) => string) =>
  setting({
    flag,
    arg: '<ms>',
    help: `${help} (ms, 0 to ${WINDOW_MS_MAX})`,
    default: 2000,
    schema: integerSchema({ label: flag, min: 0, max: WINDOW_MS_MAX }),
    text: String,
    sample: '1234',
    badSample: '3600001',
    document: { section: 'load', schema: z.number(), value: (v: number) => v },
    fact,
  });

const intOrPercentRow = (flag: '--max-surge' | '--max-unavailable', field: string, help: string) =>
  setting<number | string, number | string, 'deployment'>({
    flag,
    arg: '<n|%>',
    help: `RollingUpdate ${field}: ${help} (a whole number of Pods, or a percentage of replicas)`,
    // Kubernetes' own default for both.
    default: '25%',
    schema: intOrPercentSchema(flag),
    text: String,
    sample: '2',
    badSample: '101%',
    document: {
      section: 'deployment',
      schema: z.union([z.number(), z.string()]),
      value: (v: number | string) => v,
    },
    fact: (v: number | string) => `${field} ${v}`,
  });

/** Every setting of `draincheck rollout` beyond the scenario's (src/workload/scenario.ts), in `--help` order. */
export const rolloutSettings = {
  replicas: setting({
    flag: '--replicas',
    arg: '<n>',
    help: 'the Deployment’s replicas (1 to 100)',
    default: 3,
    schema: integerSchema({ label: '--replicas', min: 1, max: 100 }),
    text: String,
    sample: '4',
    badSample: '0',
    document: { section: 'deployment', schema: z.number(), value: (v: number) => v },
    fact: (v: number) => `${v} replicas`,
  }),
  maxSurge: intOrPercentRow('--max-surge', 'maxSurge', 'Pods above replicas during the rollout'),
  maxUnavailable: intOrPercentRow(
    '--max-unavailable',
    'maxUnavailable',
    'Pods below replicas that may be unavailable during the rollout',
  ),
  progressDeadlineSeconds: setting({
    flag: '--progress-deadline-seconds',
    arg: '<s>',
    help: 'the Deployment’s progressDeadlineSeconds: no progress for this long ends the run with that verdict (s, 1 to 3600)',
    // Kubernetes' own default.
    default: 600,
    schema: integerSchema({ label: '--progress-deadline-seconds', min: 1, max: 3600 }),
    text: String,
    sample: '90',
    badSample: '3601',
    document: { section: 'deployment', schema: z.number(), value: (v: number) => v },
    fact: (v: number) => `progressDeadlineSeconds ${v}`,
  }),
  ...loadSettings(WORK_MS_MAX),
  // Rollout-only: the runner splits the load over the Pods (src/probe/load/split.ts); each
  // load Pod gets its share as the load's own rows. Optional in the document: older ones lack it.
  loadPods: setting<LoadPodsSetting, number | undefined, 'load'>({
    flag: '--load-pods',
    arg: '<n|auto>',
    help: `on a cluster (--platform kube), send the load from this many load Pods spread over the nodes, each with its share of --rate and --connections, its own id prefix and its own clock (1 to ${LOAD_PODS_MAX}), or auto: as many as --rate needs at the measured capacity of one 500m load Pod, ~${LOAD_POD_CAPACITY.pool}/s (~${LOAD_POD_CAPACITY.new}/s with a new connection per request), at most ${LOAD_PODS_MAX} — the default, so a high --rate is not silently held back by one Pod's CPU limit while a low one still runs one Pod; the local platform runs one generator`,
    default: 'auto',
    defaultNote: 'one load Pod per started ~capacity of --rate; 1 on the local platform',
    schema: loadPodsSchema,
    text: String,
    sample: '3',
    badSample: '21',
    // The number of load Pods run (auto resolved: the plan's value); how it was chosen is the
    // document's `load.loadPodsChoice` (./run.ts). Optional: older documents lack it.
    document: {
      section: 'load',
      schema: z.number().optional(),
      value: (v: LoadPodsSetting) => (v === 'auto' ? undefined : v),
    },
    fact: (v: number | undefined, load) => {
      const how = loadPodsChoiceText(load.loadPodsChoice);
      const said = v === undefined || v <= 1 ? 'one load generator' : `the load split over ${v} load Pods`;
      return how === '' ? said : `${said} (${how})`;
    },
  }),
  beforeMs: windowRow('--before-ms', 'load before the rollout starts', (v) => `${v} ms before`),
  afterMs: windowRow('--after-ms', 'load after the Deployment is complete', (v) => `${v} ms after`),
  maxFailures: setting<FailureLimit[], null, 'none'>({
    flag: '--max-failures',
    arg: '<N|CLASS=N>',
    help: 'CI gate: exit 1 when more requests than N failed (or, with CLASS=N, more of that failure class); repeatable',
    default: [],
    schema: z.array(failureLimitSchema),
    text: (limits) => limits.map(failureLimitText).join(' '),
    repeatable: true,
    sample: 'accepted-cut=3',
    badSample: 'cut=1',
    // The gate is the run's verdict on the document, not a fact of the rollout.
    document: null,
    fact: null,
  }),
  compare: setting<ComparePolicy[] | null, null, 'none'>({
    flag: '--compare',
    arg: '<policies>',
    help: `roll one Deployment per policy (separate Deployments and Services), at once unless --sequential: two or more of ${comparePolicies.join(', ')}; drain+prestop’s preStop sleep defaults to the propagation time measured on this platform`,
    default: null,
    defaultNote: 'one Deployment, the --on-sigterm policy',
    schema: compareSchema,
    text: (v) => (v === null ? '' : v.join(',')),
    sample: 'exit,drain',
    badSample: 'exit',
    // Each compared policy is a document of its own: its scenario says which.
    document: null,
    fact: null,
  }),
  ingress: setting<IngressKind, IngressKind | undefined, 'load'>({
    flag: '--ingress',
    arg: '<proxy>',
    help: "put an ingress proxy in front of the Service's endpoints: none, nginx (Debian's nginx with ingress-nginx's defaults, reloaded on each change) or haproxy (Debian's HAProxy with the HAProxy Kubernetes Ingress Controller's defaults, changed through its Runtime API), programmed from the EndpointSlice after --ingress-sync-ms (the embedded runtime); its logs name each failed attempt's Pod and cause. With --platform kube, nginx only: draincheck's own nginx Deployment in front of the Service's ClusterIP (ingress-nginx's service-upstream), its log naming no Pod",
    default: 'none',
    schema: z.enum(ingressKinds, {
      error: (issue) => `--ingress must be none, nginx or haproxy, got ${quote(issue.input)}`,
    }),
    text: String,
    sample: 'haproxy',
    badSample: 'traefik',
    document: { section: 'load', schema: z.enum(ingressKinds).optional(), value: (v: IngressKind) => v },
    fact: (v: IngressKind | undefined, load) =>
      v === 'nginx' || v === 'haproxy'
        ? `through ${v === 'nginx' ? 'an nginx' : 'a HAProxy'} ingress to the endpoints`
        : // --ingress-url says the path itself (through your ingress).
          typeof load.ingressUrl === 'string'
          ? ''
          : 'straight to the Service',
  }),
  ingressSyncMs: setting<SyncDelay, string | undefined, 'load'>({
    flag: '--ingress-sync-ms',
    arg: '<ms|min..max>',
    help: "--ingress: how long after an EndpointSlice change the ingress routes by it, fixed or a range each change draws from (at most 60000). Default by proxy: nginx 0..3333 (ingress-nginx's --sync-rate-limit 0.3/s: up to 3.3 s between syncs); haproxy 0..100 (its controller applies an endpoints event through the Runtime API as it comes)",
    // nginx's; `haproxy` gets its own when the flag is not given (ingressSyncDefault).
    default: { ...INGRESS_SYNC_MS_DEFAULTS.nginx },
    defaultNote: 'for nginx; haproxy 0..100',
    schema: syncDelaySchema('--ingress-sync-ms'),
    text: syncDelayText,
    sample: '100..900',
    badSample: '9..1',
    document: { section: 'load', schema: z.string().optional(), value: (v: SyncDelay) => syncDelayText(v) },
    fact: (v: string | undefined, load) =>
      load.ingress === undefined || load.ingress === 'none' ? '' : `ingress sync ${v ?? '-'} ms`,
  }),
  ingressRetryNonIdempotent: setting<boolean, boolean | undefined, 'load'>({
    flag: '--ingress-retry-non-idempotent',
    arg: '',
    help: "--ingress nginx: pass a POST that failed after it was sent to the next Pod too (proxy_next_upstream … non_idempotent; ingress-nginx's default leaves it out, so a POST cut by a Pod's exit is a 502); the Pods' journals then show what it costs: POSTs executed by two Pods",
    default: false,
    schema: z.literal(true),
    text: () => '',
    sample: '',
    document: { section: 'load', schema: z.boolean().optional(), value: (v: boolean) => v },
    // Said only where it is on (an ingress's retry rule; nothing without one).
    fact: (v: boolean | undefined) => (v ? 'the ingress retries POST on the next Pod (non_idempotent)' : ''),
  }),
  ingressUpstreamKeepaliveTimeoutMs: setting<number, number | undefined, 'load'>({
    flag: '--ingress-upstream-keepalive-timeout-ms',
    arg: '<ms>',
    help: `--ingress nginx: how long nginx keeps an idle keep-alive connection to a Pod open (its upstream keepalive_timeout; ingress-nginx's upstream-keepalive-timeout, 60 s by default). Above the server's own idle close (the lab server: --keep-alive-timeout-ms plus node:http's 1 s), nginx reuses connections the Pod is closing: the idle race, 502s with no Pod deleted; the rule is this below the server's (ms, 1 to ${UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS})`,
    // ingress-nginx's ConfigMap default, upstream-keepalive-timeout: "60" (seconds).
    default: 60_000,
    schema: integerSchema({
      label: '--ingress-upstream-keepalive-timeout-ms',
      min: 1,
      max: UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS,
    }),
    text: String,
    sample: '500',
    badSample: '0',
    document: {
      section: 'load',
      schema: z.number().int().min(1).max(UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS).optional(),
      value: (v: number) => v,
    },
    // Said with nginx only (its upstream's rule), and not in a document from before the row.
    fact: (v: number | undefined, load) =>
      v === undefined || load.ingress !== 'nginx' ? '' : `nginx upstream keepalive_timeout ${v} ms`,
  }),
  lbDeregistrationMs: setting<number, number | undefined, 'load'>({
    flag: '--lb-deregistration-ms',
    arg: '<ms|aws-nlb>',
    help: `--ingress: make the ingress a cloud load balancer's target list, which keeps sending new requests to a Pod this long after the sync that saw its endpoint stop being ready (deregistration taking effect late); aws-nlb is ${LB_DEREGISTRATION.awsNlb} ms, the at least 2 minutes measured for an AWS NLB with IP targets whatever its deregistration delay (kubernetes-sigs/aws-load-balancer-controller#2366); at most ${LB_DEREGISTRATION_MAX_MS}. The preStop sleep measured for --compare drain+prestop covers it`,
    default: 0,
    defaultNote: 'none: the ingress stops sending to a Pod at the sync that saw it go',
    schema: z.string().transform((text, ctx): number => {
      const t = text.trim();
      if (t === 'aws-nlb') return LB_DEREGISTRATION.awsNlb;
      if (/^\d{1,6}$/.test(t) && Number(t) <= LB_DEREGISTRATION_MAX_MS) return Number(t);
      ctx.addIssue({
        code: 'custom',
        message: `--lb-deregistration-ms must be ms (0 to ${LB_DEREGISTRATION_MAX_MS}) or aws-nlb, got ${quote(text)}`,
      });
      return z.NEVER;
    }),
    text: String,
    sample: '2000',
    badSample: 'aws-elb',
    document: {
      section: 'load',
      schema: z.number().int().min(0).max(LB_DEREGISTRATION_MAX_MS).optional(),
      value: (v: number) => v,
    },
    // Not said when there is none (0), nor in a document from before the row.
    fact: (v: number | undefined) =>
      v === undefined || v === 0 ? '' : `load balancer deregistration ${v} ms`,
  }),
  ingressUrl: setting<string | null, string | null | undefined, 'load'>({
    flag: '--ingress-url',
    arg: '<url>',
    help: "on a cluster (--platform kube), send the load through your own ingress controller: its http:// URL as the load Pods reach it (e.g. http://ingress-nginx-controller.ingress-nginx.svc.cluster.local); draincheck creates a networking.k8s.io/v1 Ingress in its namespace routing a host of the run's own to the Service and sends every request there with that Host header (HTTP/1.1 only). The evidence is what the client saw and the Pods' journals: your ingress's own log is not read, so a 502/503/504 without a Pod's UID is the ingress's answer, its Pod unknown",
    default: null,
    defaultNote: 'none: the load goes to the Service',
    schema: ingressUrlSchema,
    text: (v) => v ?? '',
    sample: 'http://ingress-nginx-controller.ingress-nginx.svc.cluster.local',
    badSample: 'https://ingress.example',
    document: {
      section: 'load',
      schema: z.string().max(INGRESS_URL_MAX_CHARS).nullable().optional(),
      value: (v: string | null) => v,
    },
    fact: (v: string | null | undefined, load) =>
      typeof v === 'string'
        ? `through your ingress at ${v}${typeof load.ingressClass === 'string' ? '' : ' (the cluster’s default IngressClass)'}`
        : '',
  }),
  ingressClass: setting<string | null, string | null | undefined, 'load'>({
    flag: '--ingress-class',
    arg: '<name>',
    help: "--ingress-url: the Ingress's spec.ingressClassName, the IngressClass your controller serves (e.g. nginx)",
    default: null,
    defaultNote:
      "none: the cluster's default IngressClass (the one annotated ingressclass.kubernetes.io/is-default-class)",
    schema: z.string().transform((text, ctx): string => {
      const t = text.trim();
      // An IngressClass's name is a DNS-1123 subdomain (apimachinery's IsDNS1123Subdomain).
      if (t.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(t))
        return t;
      ctx.addIssue({
        code: 'custom',
        message: `--ingress-class must be an IngressClass name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'), got ${quote(text)}`,
      });
      return z.NEVER;
    }),
    text: (v) => v ?? '',
    sample: 'nginx',
    badSample: 'Nginx_Class',
    document: {
      section: 'load',
      schema: z.string().max(253).nullable().optional(),
      value: (v: string | null) => v,
    },
    // Said only with the URL (without one it means nothing).
    fact: (v: string | null | undefined, load) =>
      typeof v === 'string' && typeof load.ingressUrl === 'string' ? `IngressClass ${v}` : '',
  }),
  sequential: setting<boolean, null, 'none'>({
    flag: '--sequential',
    arg: '',
    help: '--compare: roll the policies one after another, each with the machine or node to itself, instead of at once (slower; the only fair choice when the load or the node cannot carry every policy at once)',
    default: false,
    schema: z.literal(true),
    text: () => '',
    sample: '',
    // The compare's shape, kept in each document's `compare.sequential`.
    document: null,
    fact: null,
  }),
  gzip: setting<boolean, null, 'none'>({
    flag: '--gzip',
    arg: '',
    help: 'gzip the record file',
    default: false,
    schema: z.literal(true),
    text: () => '',
    sample: '',
    // The record file's name says it (`.ndjson.gz`).
    document: null,
    fact: null,
  }),
};
export type RolloutSettings = SettingValues<typeof rolloutSettings>;
export type RolloutSettingName = keyof typeof rolloutSettings;

/** Every rollout setting from commander's options (DC_USAGE with the row's message when bad). */
export function readRolloutSettings(options: Record<string, unknown>): RolloutSettings {
  const settings = readSettings(rolloutSettings, options);
  // --ingress-sync-ms not given: the proxy's own controller's delay (INGRESS_SYNC_MS_DEFAULTS).
  if (
    options[flagAttribute(rolloutSettings.ingressSyncMs.flag)] === undefined &&
    settings.ingress === 'haproxy'
  )
    return { ...settings, ingressSyncMs: { ...INGRESS_SYNC_MS_DEFAULTS.haproxy } };
  return settings;
}

/**
 * The plan's `load`: every row of the load's table (a row added there reaches the plan, the
 * generator and the load Pod without an edit here), the windows, the record file's compression.
 */
export function loadPlan(s: RolloutSettings, loadPods: LoadPodsChoice) {
  return {
    ...loadSettingValues(s),
    loadPods: loadPods.pods,
    ...(loadPods.how !== null ? { loadPodsChoice: loadPods.how } : {}),
    beforeMs: s.beforeMs,
    afterMs: s.afterMs,
    gzip: s.gzip,
    ingress: s.ingress,
    ingressSyncMs: s.ingressSyncMs,
    lbDeregistrationMs: s.lbDeregistrationMs,
    ingressUpstreamKeepaliveTimeoutMs: s.ingressUpstreamKeepaliveTimeoutMs,
    ingressRetryNonIdempotent: s.ingressRetryNonIdempotent,
    ingressUrl: s.ingressUrl,
    ingressClass: s.ingressClass,
  };
}
export type LoadPlan = ReturnType<typeof loadPlan>;

/** The plan's `deployment`: the rows the document keeps under `deployment`. */
export function deploymentPlan(s: RolloutSettings) {
  return {
    replicas: s.replicas,
    maxSurge: s.maxSurge,
    maxUnavailable: s.maxUnavailable,
    progressDeadlineSeconds: s.progressDeadlineSeconds,
  };
}

/** The document's schemas of `load` and `deployment`, from the rows (./document.ts). */
export const loadDocumentShape = documentShape(rolloutSettings, 'load');
export const deploymentDocumentShape = documentShape(rolloutSettings, 'deployment');
type Fields<Shape extends Record<string, z.ZodType>> = { [K in keyof Shape]: z.infer<Shape[K]> };

/** The document's `load` section, from the plan's values. */
export function loadDocumentFields(
  load: LoadPlan,
): Fields<typeof loadDocumentShape> & { loadPodsChoice?: LoadPodsChoice['how'] & object } {
  return {
    ...(documentFields(rolloutSettings, 'load', load) as Fields<typeof loadDocumentShape>),
    // How the load Pods were chosen (auto or given; none on the local platform): beside the row's
    // number, read by its fact.
    ...(load.loadPodsChoice !== undefined ? { loadPodsChoice: load.loadPodsChoice } : {}),
  };
}

/** The HTTP/1.1 pool's rows, not said for an h2c load (src/probe/load/settings.ts forProtocol). */
const http1PoolRows = new Set(['pool', 'idleTimeoutMs', 'retryReused']);

/** A document's sections the rows keep their values in (untrusted when read back). */
interface SettingSections {
  load: Record<string, unknown>;
  deployment: Record<string, unknown>;
}

/**
 * How the report says each setting a document keeps, from its rows, in table order (the text's
 * header line and the page's facts): `name` is the document field, `text` is unescaped.
 */
export function rolloutFacts(
  doc: SettingSections,
): Array<{ section: keyof SettingSections; name: string; text: string }> {
  return Object.entries(rolloutSettings).flatMap(([name, row]) => {
    const section = row.document?.section as keyof SettingSections | undefined;
    if (!section || !row.fact || !(name in doc[section])) return [];
    // HTTP/2's load has no keep-alive pool: the pool's rows say nothing of it.
    if (
      (doc.load.protocol === 'h2c' || doc.load.protocol === 'grpc' || doc.load.protocol === 'ws') &&
      http1PoolRows.has(name)
    )
      return [];
    // An RPC or a WebSocket message has no method: "GET only" would say something false.
    if ((doc.load.protocol === 'grpc' || doc.load.protocol === 'ws') && name === 'postShare') return [];
    // The WebSocket client's reconnect says nothing of another protocol's load.
    if (doc.load.protocol !== 'ws' && name === 'wsReconnect') return [];
    const values = doc[section] as Readonly<Record<string, unknown>>;
    const text = (row.fact as (v: unknown, s: Readonly<Record<string, unknown>>) => string)(
      values[name],
      values,
    );
    // '': the setting means nothing here (its companion is off).
    return text === '' ? [] : [{ section, name, text }];
  });
}
