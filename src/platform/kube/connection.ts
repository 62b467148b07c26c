// Finding the cluster the way kubectl does: --kubeconfig, else the files in KUBECONFIG
// (missing ones skipped, the first file that sets a name or current-context wins), else
// ~/.kube/config, else the Pod's service account when KUBERNETES_SERVICE_HOST is set.
// Nothing here touches the network; every mistake is a DC_KUBE_CONFIG naming what to fix.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { DraincheckError, quote } from '../../errors.js';
import type { KubeTarget } from './api-errors.js';

export interface KubeConnectionOptions {
  /** `--kubeconfig`: one file, used alone (as kubectl does). */
  kubeconfig?: string;
  /** `--context`: a context name from the kubeconfig; default its current-context. */
  context?: string;
  /** Environment to read KUBECONFIG / KUBERNETES_SERVICE_HOST from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Home directory for ~/.kube/config (default os.homedir()). */
  homeDir?: string;
  /** Prefix of /var/run/secrets/kubernetes.io/serviceaccount (tests point it at a temp dir). */
  serviceAccountPrefix?: string;
}

export type KubeConfigSource = 'flag' | 'KUBECONFIG' | 'home' | 'in-cluster';

export interface KubeConnection {
  kubeConfig: KubeConfig;
  /** The context in use, as it goes into the run document. */
  context: string;
  /** The API server URL of that context. */
  server: string;
  source: KubeConfigSource;
  /** Where the configuration came from, for messages. */
  origin: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Loads the kubeconfig and selects the context; throws DC_KUBE_CONFIG for every mistake. */
export function loadKubeConnection(options: KubeConnectionOptions = {}): KubeConnection {
  const env = options.env ?? process.env;
  const { kubeConfig, source, origin } = loadConfig(options, env);
  const contextNames = kubeConfig.getContexts().map((c) => c.name);
  const known = contextNames.length > 0 ? contextNames.join(', ') : 'none';
  if (options.context !== undefined) {
    if (!kubeConfig.getContextObject(options.context)) {
      throw new DraincheckError(
        'DC_KUBE_CONFIG',
        `context ${quote(options.context)} does not exist in ${origin} (contexts: ${known})`,
        { hint: 'pass one of those to --context, or list them with `kubectl config get-contexts`' },
      );
    }
    kubeConfig.setCurrentContext(options.context);
  }
  const context = kubeConfig.getCurrentContext();
  if (!context || !kubeConfig.getContextObject(context)) {
    throw new DraincheckError(
      'DC_KUBE_CONFIG',
      context
        ? `the current-context ${quote(context)} of ${origin} does not exist (contexts: ${known})`
        : `${origin} sets no current-context (contexts: ${known})`,
      { hint: 'pass --context NAME' },
    );
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new DraincheckError(
      'DC_KUBE_CONFIG',
      `context ${quote(context)} in ${origin} names a cluster that is not defined there`,
      { hint: 'fix the kubeconfig, or pass another --context' },
    );
  }
  // client-node refuses plain HTTP unless TLS verification is explicitly off; say so now
  // instead of failing on the first request with its internal message.
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    throw new DraincheckError(
      'DC_KUBE_CONFIG',
      `the server of context ${quote(context)} is plain HTTP (${cluster.server}), which @kubernetes/client-node only accepts with insecure-skip-tls-verify: true`,
      { hint: 'use the https:// address, or set insecure-skip-tls-verify: true on that cluster' },
    );
  }
  return { kubeConfig, context, server: cluster.server, source, origin };
}

function loadConfig(
  options: KubeConnectionOptions,
  env: NodeJS.ProcessEnv,
): { kubeConfig: KubeConfig; source: KubeConfigSource; origin: string } {
  if (options.kubeconfig !== undefined) {
    if (!existsSync(options.kubeconfig)) {
      throw new DraincheckError(
        'DC_KUBE_CONFIG',
        `--kubeconfig ${quote(options.kubeconfig)} does not exist`,
        {
          hint: 'pass the path of a kubeconfig file',
        },
      );
    }
    return { kubeConfig: loadFiles([options.kubeconfig]), source: 'flag', origin: options.kubeconfig };
  }
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter((f) => f !== '');
  if (listed.length > 0) {
    const present = listed.filter((f) => existsSync(f));
    if (present.length === 0) {
      throw new DraincheckError(
        'DC_KUBE_CONFIG',
        `none of the files in KUBECONFIG exists (${listed.join(path.delimiter)})`,
        { hint: 'fix KUBECONFIG, or pass --kubeconfig' },
      );
    }
    return {
      kubeConfig: loadFiles(present),
      source: 'KUBECONFIG',
      origin: `KUBECONFIG (${present.join(', ')})`,
    };
  }
  const home = path.join(options.homeDir ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return { kubeConfig: loadFiles([home]), source: 'home', origin: home };

  const prefix = options.serviceAccountPrefix ?? '';
  if (env.KUBERNETES_SERVICE_HOST && existsSync(`${prefix}${SERVICE_ACCOUNT_TOKEN}`)) {
    const kubeConfig = new KubeConfig();
    // loadFromCluster reads the host and port from process.env, so hand it ours.
    withEnv(env, () => kubeConfig.loadFromCluster(prefix));
    return { kubeConfig, source: 'in-cluster', origin: 'the Pod’s service account' };
  }
  throw new DraincheckError(
    'DC_KUBE_CONFIG',
    `no kubeconfig found: no --kubeconfig, KUBECONFIG is unset, ${home} does not exist, and this is not a Pod (KUBERNETES_SERVICE_HOST is unset)`,
    { hint: 'pass --kubeconfig FILE, set KUBECONFIG, or use --platform local' },
  );
}

/** kubectl's merge: the first file that defines a name (or current-context) wins. */
function loadFiles(files: string[]): KubeConfig {
  const merged = new KubeConfig();
  for (const file of files) {
    const one = new KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (error) {
      throw new DraincheckError('DC_KUBE_CONFIG', `cannot read kubeconfig ${file}: ${firstLine(error)}`, {
        hint: 'check it with `kubectl config view`',
        cause: error,
      });
    }
    if (!merged.currentContext && one.currentContext) merged.currentContext = one.currentContext;
    for (const c of one.clusters) if (!merged.getCluster(c.name)) merged.addCluster(c);
    for (const u of one.users) if (!merged.getUser(u.name)) merged.addUser(u);
    for (const c of one.contexts) if (!merged.getContextObject(c.name)) merged.addContext(c);
  }
  return merged;
}

function withEnv(env: NodeJS.ProcessEnv, run: () => void): void {
  if (env === process.env) return run();
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  const set = (key: string, value: string | undefined) => {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  };
  set('KUBERNETES_SERVICE_HOST', env.KUBERNETES_SERVICE_HOST);
  set('KUBERNETES_SERVICE_PORT', env.KUBERNETES_SERVICE_PORT);
  try {
    run();
  } finally {
    set('KUBERNETES_SERVICE_HOST', saved.host);
    set('KUBERNETES_SERVICE_PORT', saved.port);
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}

/** Where messages say we were talking to, with the user's --kubeconfig to repeat in hints. */
export function kubeTargetOf(connection: KubeConnection): KubeTarget {
  return {
    server: connection.server,
    context: connection.context,
    ...(connection.source === 'flag' ? { kubeconfig: connection.origin } : {}),
  };
}
