// `draincheck sidecar-proxy`: the proxy sidecar of a Pod (src/server/sidecar-proxy.ts) — on the
// Pod's port in front of the app, with a SIGTERM policy of its own.
import { Command, Option } from 'commander';
import {
  resolveSidecarProxyConfig,
  sidecarPolicies,
  sidecarPolicyHelp,
  sidecarProxySettings,
  startSidecarProxy,
} from '../../server/sidecar-proxy.js';

export function sidecarProxyCommand(): Command {
  const command = new Command('sidecar-proxy')
    .summary("run a Pod's proxy sidecar (HTTP/1.1, in front of the app)")
    .description(
      "Run an HTTP/1.1 reverse proxy on the Pod's port in front of the app (another port of the same Pod), " +
        'with keep-alive upstream connections, as a mesh sidecar. Its journal (JSON lines on stdout) is its own. ' +
        'Every setting is also read from an environment variable; a flag wins over the variable.',
    );
  for (const [key, setting] of Object.entries(sidecarProxySettings)) {
    const option = new Option(
      setting.flag,
      `${setting.help} (env ${setting.env}${setting.default === '' ? '' : `, default ${setting.default}`})`,
    );
    if (key === 'onSigterm') option.choices(sidecarPolicies);
    command.addOption(option);
  }
  command.addHelpText(
    'after',
    [
      '',
      'SIGTERM policies (--on-sigterm):',
      ...sidecarPolicies.map((p) => `  ${p.padEnd(6)} ${sidecarPolicyHelp[p]}`),
      '',
      'Exit codes: 0 clean exit, 2 bad setting, 5 cannot listen.',
    ].join('\n'),
  );
  command.action(async (flags: Record<string, string | undefined>) => {
    await startSidecarProxy(resolveSidecarProxyConfig(flags));
  });
  return command;
}
