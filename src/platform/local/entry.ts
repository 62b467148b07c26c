// The embedded runtime's registration (src/platform/registry.ts): its flags and one
// LocalCluster per session, shared by the runs of a lab, each in its own namespace.
import { preStopActionFlag, preStopActionOf, type PlatformEntry } from '../entry.js';
import { LocalCluster, type LocalClusterOptions, type ServiceProxyMode } from './cluster.js';
import { prefetchHostSupport } from './host-support.js';
import { LocalPlatform } from './local-platform.js';
import { collectStaleLinks, type PodNetworkMode } from './pod-network.js';
import { collectStaleTables } from './nftables.js';
import { parseProxySync, timingProfiles, type TimingProfileName } from './timing.js';
import { DraincheckError, quote } from '../../errors.js';
import { integerSchema } from '../../util/integer.js';
import { NETWORK_DELAY_MS_MAX } from './network-delay.js';

export const localEntry: PlatformEntry = {
  name: 'local',
  description: 'local (the embedded runtime)',
  named: 'the embedded runtime (--platform local)',
  refusedHint: 'on a real cluster the cluster decides these; leave them out',
  flags: [
    {
      flags: '--timing <profile>',
      attribute: 'timing',
      description: `embedded runtime delays: ${Object.entries(timingProfiles)
        .map(([name, p]) => `${name} (${p.about})`)
        .join('; ')}`,
      choices: Object.keys(timingProfiles),
    },
    {
      flags: '--proxy-sync-ms <ms|min..max>',
      attribute: 'proxySyncMs',
      description:
        "embedded runtime: how long after an EndpointSlice change the Service rules follow it (kube-proxy's sync), " +
        'fixed or a range each sync draws from (default: the --timing profile; calibrated 240..1750, measured on a real node)',
    },
    {
      flags: '--service-proxy <mode>',
      attribute: 'serviceProxy',
      description:
        'embedded runtime: how Service connections reach the Pod — nftables (kernel NAT rules, as ' +
        "kube-proxy's iptables/nftables modes; Linux as root with nft), userspace (a TCP proxy), " +
        'or auto (nftables where it works, else userspace; the default)',
      choices: ['auto', 'nftables', 'userspace'],
    },
    {
      flags: '--network-delay-ms <ms>',
      attribute: 'networkDelayMs',
      description:
        "embedded runtime: a network's one-way latency between a Service's clients and its Pods, on every " +
        "byte and every close (0 to 1000; loopback has none, so a request and a server's close cross only by " +
        'chance; a real network makes that a window: the idle race). Carried by the userspace Service proxy (default 0)',
    },
    {
      flags: '--pod-network <mode>',
      attribute: 'podNetwork',
      description:
        'embedded runtime: which Pods get a network namespace and address of their own, so a server ' +
        'that binds 0.0.0.0 collides with no other Pod — isolated (every Pod; Linux as root), shared ' +
        '(none: each Pod must bind HOST), or auto (where the OS allows it, Pods running a command of ' +
        'their own; the default)',
      choices: ['auto', 'isolated', 'shared'],
    },
    {
      flags: '--no-pid1',
      attribute: 'pid1',
      description: 'embedded runtime: run containers as ordinary child processes, not as PID 1',
      default: true,
    },
    // The embedded kubelet runs either preStop form (prestop.ts: exec runs the command with the
    // container's environment), so --prestop-action applies here too.
    preStopActionFlag,
  ],
  async open(values) {
    const profile =
      typeof values.timing === 'string' && values.timing in timingProfiles
        ? timingProfiles[values.timing as TimingProfileName].timing
        : timingProfiles.calibrated.timing;
    let proxySyncDelayMs = profile.proxySyncDelayMs;
    if (typeof values.proxySyncMs === 'string') {
      const parsed = parseProxySync(values.proxySyncMs);
      if (parsed === null)
        throw new DraincheckError(
          'DC_USAGE',
          `--proxy-sync-ms must be a number of ms or a range MIN..MAX from 0 to 60000, got ${quote(values.proxySyncMs)}`,
        );
      proxySyncDelayMs = parsed;
    }
    const options: LocalClusterOptions = {
      timing: { ...profile, proxySyncDelayMs },
      ...(values.pid1 === false ? { pid1: false } : {}),
      ...(typeof values.serviceProxy === 'string'
        ? { serviceProxy: values.serviceProxy as ServiceProxyMode }
        : {}),
      ...(typeof values.podNetwork === 'string' ? { podNetwork: values.podNetwork as PodNetworkMode } : {}),
      ...(typeof values.networkDelayMs === 'string'
        ? { networkDelayMs: networkDelayOf(values.networkDelayMs) }
        : {}),
    };
    const preStopAction = preStopActionOf(values.prestopAction);
    await prefetchHostSupport(options);
    const cluster = new LocalCluster(options);
    return {
      name: 'local',
      newPlatform: () => new LocalPlatform({ cluster }),
      planOptions: preStopAction ? { manifest: { preStopAction } } : {},
      close: () => cluster.dispose(),
    };
  },
  outputHint: () => 'its whole output is in the run document (server output events)',
  leftoversHint: () =>
    'the embedded runtime could not release them; see the cleanup-error event in the run document',
  /**
   * The embedded runtime's runs live in the runner's process: what outlives a killed runner is
   * in this host's kernel — its nftables table, its Pods' links and blackhole routes. Each is
   * held by a lease the kernel drops with its holder, so only a dead runtime's are taken (the
   * next runtime collects them too, before it uses an address). Runs have no id or age here.
   */
  async cleanup(_values, options) {
    const kubeOnly = [
      options.runId !== undefined ? '--run' : '',
      options.olderThanMs !== undefined ? '--older-than' : '',
      options.force ? '--force' : '',
    ].filter(Boolean);
    if (kubeOnly.length > 0)
      throw new DraincheckError(
        'DC_USAGE',
        `${kubeOnly.join(', ')} ${kubeOnly.length > 1 ? 'apply' : 'applies'} only to --platform kube: the embedded runtime's leftovers belong to no run that is still alive`,
        { hint: 'leave them out, or add --platform kube' },
      );
    const dryRun = { dryRun: options.dryRun };
    const tables = await collectStaleTables(dryRun);
    const links = await collectStaleLinks(dryRun);
    return {
      where:
        'the embedded runtime on this host: nftables tables, Pod links and blackhole routes of runtimes no longer running',
      removed: [
        ...tables.map((t) => `nftables table ${t}`),
        ...links.map((l) => (l.startsWith('blackhole ') ? `route ${l}` : `link ${l}`)),
      ],
      kept: [],
    };
  },
};

/** `--network-delay-ms`'s text as ms, or one DC_USAGE line. */
function networkDelayOf(text: string): number {
  const parsed = integerSchema({ label: '--network-delay-ms', min: 0, max: NETWORK_DELAY_MS_MAX }).safeParse(
    text,
  );
  if (!parsed.success)
    throw new DraincheckError(
      'DC_USAGE',
      parsed.error.issues[0]?.message ?? '--network-delay-ms: a bad value',
    );
  return parsed.data;
}
