// `draincheck server`: the lab server, the process inside the Pod whose accepted
// requests the experiment follows.
import { Command, Option } from 'commander';
import {
  policyHelp,
  resolveServerConfig,
  serverProtocols,
  serverSettings,
  shutdownPolicies,
} from '../../server/config.js';
import { downwardApiEnv } from '../../server/identity.js';
import { startLabServer } from '../../server/main.js';

export function serverCommand(): Command {
  const command = new Command('server')
    .summary('run the lab server (the Pod side of the experiment)')
    .description(
      'Run the lab server: GET /healthz, GET /work?ms=N&id=R, GET /state, and a JSON journal on stdout. ' +
        'Every setting is also read from an environment variable; a flag wins over the variable. ' +
        'The contract other servers can implement is docs/LAB-CONTRACT.md.',
    );
  for (const [key, setting] of Object.entries(serverSettings)) {
    const option = new Option(
      setting.flag,
      `${setting.help} (env ${setting.env}, default ${setting.default})`,
    );
    if (key === 'onSigterm') option.choices(shutdownPolicies);
    if (key === 'protocol') option.choices(serverProtocols);
    command.addOption(option);
  }
  command.addHelpText(
    'after',
    [
      '',
      'Shutdown policies (--on-sigterm):',
      ...shutdownPolicies.map((p) => `  ${p.padEnd(8)} ${policyHelp[p]}`),
      '',
      `Identity (Downward API env): ${Object.values(downwardApiEnv).join(', ')}. A missing POD_UID is`,
      'reported as uid: null, never invented.',
      '',
      'Exit codes: 0 clean exit, 1 drain timed out and cut requests, 2 bad setting, 5 cannot listen.',
      '',
      'Example:',
      '  POD_UID=$(uuidgen) draincheck server --host 127.0.0.1 --port 8080 --on-sigterm drain --drain-delay-ms 2000',
    ].join('\n'),
  );
  command.action(async (flags: Record<string, string | undefined>) => {
    const config = resolveServerConfig(flags);
    await startLabServer(config);
  });
  return command;
}
