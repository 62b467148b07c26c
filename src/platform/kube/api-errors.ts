// What went wrong talking to the API server, as the one-line DraincheckError a user can act
// on. The 403 message names the verb and resource the API server refused — read from the
// Status body when the API returned one, else from the request we made (client-node's Watch
// drops the body of a failed watch).
import { truncateText } from '../../util/bounded-json.js';
import { DraincheckError, isDraincheckError } from '../../errors.js';
import { shellQuote } from '../../util/shell-quote.js';

/** The request that failed, in RBAC's words. */
export interface KubeAction {
  verb: string;
  /** Plural resource, as in a Role rule: `pods`, `pods/log`, `endpointslices`. */
  resource: string;
  group?: string;
  namespace?: string;
  name?: string;
}

/** Connection facts for messages: where we were talking to. */
export interface KubeTarget {
  server: string;
  context: string;
  /** The `--kubeconfig FILE` the user gave, repeated in every kubectl command we suggest. */
  kubeconfig?: string;
}

/** `kubectl` with the user's own --kubeconfig and --context, for hints. */
export function kubectlFor(target: KubeTarget): string {
  return `kubectl${target.kubeconfig ? ` --kubeconfig ${shellQuote(target.kubeconfig)}` : ''} --context ${shellQuote(target.context)}`;
}

export interface KubeStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    /** 422 Invalid: one cause per field (metav1.StatusCause). */
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/** The HTTP status of a failed request, from an ApiException (`code`) or a Watch error (`statusCode`). */
export function httpStatusOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; statusCode?: unknown; name?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  // ApiException's `code` is the HTTP status; a system error's `code` is a string.
  if (typeof e.code === 'number') return e.code;
  return undefined;
}

/** The Status object in an ApiException body (a JSON string or already an object), if any. */
export function statusOf(error: unknown): KubeStatus | undefined {
  const body = (error as { body?: unknown } | null)?.body;
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch (e) {
      if (e instanceof SyntaxError) return undefined;
      throw e;
    }
  }
  if (!value || typeof value !== 'object') return undefined;
  const status: KubeStatus = value;
  return status.kind === 'Status' ? status : undefined;
}

const NETWORK_CODES =
  /^(E[A-Z_]+|UND_ERR_[A-Z_]+|CERT_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_[A-Z_]+|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_[A-Z_]+)$/;

/** Maps any failure of an API call to a DraincheckError; anything unrecognised is rethrown as is. */
export function toKubeError(error: unknown, action: KubeAction, target: KubeTarget): Error {
  if (isDraincheckError(error)) return error;
  const where = action.namespace ? ` in namespace "${action.namespace}"` : '';
  const what = `${action.verb} ${action.resource}${action.name ? ` "${action.name}"` : ''}${where}`;
  const status = httpStatusOf(error);
  if (status !== undefined) {
    const body = statusOf(error);
    if (status === 401) {
      return new DraincheckError(
        'DC_KUBE_UNAUTHORIZED',
        `the API server ${target.server} rejected the credentials of context "${target.context}" (401 Unauthorized)`,
        {
          hint: `renew them (an expired token or certificate?), then check with \`${kubectlFor(target)} get ns\``,
          cause: error,
        },
      );
    }
    if (status === 403) return forbidden(error, body, action, target);
    // Creating in a namespace that does not exist: the NamespaceLifecycle admission plugin
    // answers NewNotFound(namespaces, ns) — `namespaces "x" not found`, details.kind namespaces.
    if (status === 404 && body?.details?.kind === 'namespaces' && action.verb === 'create') {
      const ns = body.details.name ?? action.namespace ?? '';
      return new DraincheckError('DC_KUBE_API', `namespace ${JSON.stringify(ns)} does not exist`, {
        hint: `--namespace must name an existing namespace: create it (\`${kubectlFor(target)} create namespace ${ns}\`), or leave --namespace out for a namespace of the run's own`,
        cause: error,
      });
    }
    if (status === 422) return invalid(error, body, action, what);
    // The API server's words, bounded: a Status body is the cluster's, not ours.
    const message = truncateText(body?.message ?? `HTTP ${status}`, 400);
    return new DraincheckError('DC_KUBE_API', `cannot ${what}: ${message}`, {
      hint: `the API server ${target.server} answered ${status}${body?.reason ? ` ${body.reason}` : ''}`,
      cause: error,
    });
  }
  const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (e?.name === 'AbortError' || (e?.name === 'FetchError' && typeof e.code === 'string')) {
    const code = typeof e.code === 'string' ? e.code : 'no answer in time';
    const tls = /CERT|SELF_SIGNED|TLS|UNABLE_TO/.test(code);
    return new DraincheckError(
      'DC_KUBE_UNREACHABLE',
      `cannot reach the API server ${target.server} of context "${target.context}" to ${what} (${code})`,
      {
        hint: tls
          ? 'the server certificate does not verify against the kubeconfig’s CA; check the cluster entry'
          : `is the cluster running and reachable from here? try \`${kubectlFor(target)} cluster-info\``,
        cause: error,
      },
    );
  }
  if (typeof e?.code === 'string' && NETWORK_CODES.test(e.code)) {
    return new DraincheckError(
      'DC_KUBE_UNREACHABLE',
      `cannot reach the API server ${target.server} of context "${target.context}" to ${what} (${e.code})`,
      { hint: `try \`${kubectlFor(target)} cluster-info\``, cause: error },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

// "pods \"work\" is forbidden: User \"lab-nobody\" cannot delete resource \"pods\" in API group \"\" in the namespace \"lab\""
const FORBIDDEN = /User "([^"]*)" cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?/;

function forbidden(error: unknown, body: KubeStatus | undefined, action: KubeAction, target: KubeTarget) {
  const m = body?.message ? FORBIDDEN.exec(body.message) : null;
  // A 403 with a message that is not RBAC's is an admission refusal (Pod Security, a policy
  // engine, a quota): RBAC is not the answer, the API server's words are.
  if (body?.message && !m) {
    const where = action.namespace ? ` in namespace "${action.namespace}"` : '';
    return new DraincheckError(
      'DC_KUBE_FORBIDDEN',
      `the API server refused to ${action.verb} ${action.resource}${where}: ${truncateText(body.message, 400)}`,
      {
        hint: 'an admission policy of the namespace refused it; run in a namespace of its own (no --namespace) or relax the policy there',
        cause: error,
      },
    );
  }
  const verb = m?.[2] ?? action.verb;
  const resource = m?.[3] ?? body?.details?.kind ?? action.resource;
  const group = m?.[4] ?? body?.details?.group ?? action.group ?? '';
  const user = m?.[1] ? `user "${m[1]}"` : `the user of context "${target.context}"`;
  const where = action.namespace ? ` in namespace "${action.namespace}"` : '';
  return new DraincheckError(
    'DC_KUBE_FORBIDDEN',
    `forbidden: ${user} cannot ${verb} ${resource}${group ? ` (API group ${group})` : ''}${where}`,
    {
      hint: 'grant what deploy/rbac-namespaced.yaml (runs with -n) or deploy/rbac-cluster.yaml (a namespace per run) lists, bound to that user',
      cause: error,
    },
  );
}

/**
 * 422 Invalid: the API server's validation refused the object — name the field(s). The one
 * met on real clusters: a preStop `sleep` handler sent to a server without the sleep action
 * (before 1.30, or the PodLifecycleSleepAction gate off) — it drops the unknown field and
 * finds a preStop with no handler ("must specify a handler type").
 */
function invalid(error: unknown, body: KubeStatus | undefined, action: KubeAction, what: string) {
  const causes = (body?.details?.causes ?? []).slice(0, 5).map((c) => {
    const field = typeof c.field === 'string' ? c.field.slice(0, 200) : '';
    const message = typeof c.message === 'string' ? c.message.slice(0, 200) : '';
    return field ? `${field}: ${message}` : message;
  });
  const said = causes.length > 0 ? causes.join('; ') : (body?.message ?? 'HTTP 422').slice(0, 400);
  const preStop = (body?.details?.causes ?? []).some((c) => /lifecycle\.preStop/.test(c.field ?? ''));
  return new DraincheckError('DC_KUBE_INVALID', `the API server refused to ${what} as invalid: ${said}`, {
    hint: preStop
      ? 'this API server does not know the preStop sleep action (Kubernetes before 1.30, or the PodLifecycleSleepAction feature gate off); pass --prestop-action exec'
      : `the ${action.resource} draincheck built is not valid for this API server: please report it with \`draincheck --version\` and the server version`,
    cause: error,
  });
}
