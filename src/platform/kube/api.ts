// The client-node API objects KubePlatform uses, built from one KubeConnection, with a time
// limit on every non-streaming request (client-node sets none: a black-holed API server
// would otherwise hang the run for the kernel's TCP timeout).
import {
  AppsV1Api,
  CoreV1Api,
  createConfiguration,
  DiscoveryV1Api,
  Log,
  NetworkingV1Api,
  ServerConfiguration,
  VersionApi,
  Watch,
  type KubeConfig,
  type Middleware,
} from '@kubernetes/client-node';

export interface KubeApi {
  core: CoreV1Api;
  apps: AppsV1Api;
  discovery: DiscoveryV1Api;
  /** Ingresses (--ingress-url). */
  networking: NetworkingV1Api;
  version: VersionApi;
  /** Streaming: no time limit (a watch or a followed log lives as long as the run). */
  watch: Watch;
  log: Log;
}

export interface KubeApiOptions {
  /** Limit for each request/response that is not a stream (default 30 s). */
  requestTimeoutMs?: number;
}

export function createKubeApi(kubeConfig: KubeConfig, options: KubeApiOptions = {}): KubeApi {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('createKubeApi: the kubeconfig has no current cluster');
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const timeLimit: Middleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return Promise.resolve(context);
    },
    post: (context) => Promise.resolve(context),
  };
  // What KubeConfig.makeApiClient does, plus the middleware.
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kubeConfig },
    promiseMiddleware: [timeLimit],
  });
  return {
    core: new CoreV1Api(configuration),
    apps: new AppsV1Api(configuration),
    discovery: new DiscoveryV1Api(configuration),
    networking: new NetworkingV1Api(configuration),
    version: new VersionApi(configuration),
    watch: new Watch(kubeConfig),
    log: new Log(kubeConfig),
  };
}

/**
 * The typed API turns every metav1.Time into a Date; watch events carry the API's JSON
 * (RFC 3339 strings). Objects returned by KubePlatform take the JSON shape either way, so a
 * created or deleted object reads like the same object in a watch event.
 */
export function plain<T>(object: T): T {
  return JSON.parse(
    JSON.stringify(object, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      // metav1.Time has whole seconds: "2026-12-02T14:09:42Z", not "...42.000Z".
      return raw instanceof Date ? raw.toISOString().replace(/\.000Z$/, 'Z') : value;
    }),
  ) as T;
}
