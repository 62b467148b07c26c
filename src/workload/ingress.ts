// The ingress proxies draincheck can put in the path in front of a Service's endpoints
// (--ingress): Debian's nginx (the data plane of ingress-nginx) and Debian's HAProxy (of the
// HAProxy Kubernetes Ingress Controller). Here, below the platforms, because a scenario names one
// (`run --ingress`) and the platforms run it (src/platform/local/ingress-*.ts).
export const ingressProxies = ['nginx', 'haproxy'] as const;
export type IngressProxy = (typeof ingressProxies)[number];
