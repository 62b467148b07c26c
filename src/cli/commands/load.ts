// `draincheck load`: the open-loop load generator (src/probe/load/) as a process of its own —
// what the load Pod of `draincheck rollout --platform kube` runs, so that the load takes the
// cluster's Service path. It waits until GET /healthz through the Service answers 200, prints
// the record header, then one NDJSON record per request on stdout; SIGTERM (the Pod's
// deletion) stops the offer, lets the requests in flight finish, prints the trailer and exits.
import http from 'node:http';
import { Command } from 'commander';
import { z } from 'zod';
import { DraincheckError } from '../../errors.js';
import { loadOrigin, startLoad } from '../../probe/load/generator.js';
import { loadSettings } from '../../probe/load/settings.js';
import { RECORD_FILE_KIND, recordLine } from '../../probe/load/record-file.js';
import { WORK_MS_MAX } from '../../server/work-params.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { integerSchema, TIMER_MAX_MS } from '../../util/integer.js';
import { readSettings } from '../../util/setting-rows.js';
import { addSettingFlags } from '../setting-flags.js';
import { firstIssue } from '../zod-issue.js';

/** The load never runs longer than this (a runner that vanished must not leave it running). */
const LOAD_SECONDS_MAX = 3600;

const flagsSchema = z.object({
  serviceUrl: z.url({ protocol: /^http$/, error: '--service-url must be an http:// URL' }),
  idPrefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,40}$/, { error: '--id-prefix must be 1-40 characters of A-Z a-z 0-9 . _ -' }),
  serviceReadyTimeoutMs: integerSchema({ label: '--service-ready-timeout-ms', min: 1, max: TIMER_MAX_MS }),
  maxSeconds: integerSchema({ label: '--max-seconds', min: 1, max: LOAD_SECONDS_MAX }),
});

/**
 * The load's settings: the rows `draincheck rollout` passes to the load Pod
 * (src/platform/kube/load-pod.ts), read back here by the same rows.
 */
const settingRows = loadSettings(WORK_MS_MAX);

/** The load's settings from commander's options (DC_USAGE with the row's message when bad). */
export const readLoadFlags = (flags: Record<string, unknown>) => readSettings(settingRows, flags);

export function loadCommand(): Command {
  const command = new Command('load')
    .summary('send open-loop load to a Service URL, one NDJSON record per request (used in the load Pod)')
    .description(
      'Wait until GET /healthz through the Service answers 200, then send GET /work at a fixed rate (open loop) until SIGTERM or --max-seconds, and print one draincheck.load-records/v1 line per request on stdout. On SIGTERM the requests in flight finish and are printed before the exit.',
    )
    .requiredOption('--service-url <url>', 'the Service, e.g. http://10.96.0.12:80');
  return addSettingFlags(command, settingRows)
    .option('--id-prefix <prefix>', 'work ids are <prefix><seq>', 'L')
    .option('--service-ready-timeout-ms <ms>', 'give up waiting for GET /healthz 200', '60000')
    .option('--max-seconds <s>', 'stop offering after this long whatever happens', String(LOAD_SECONDS_MAX))
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      const parsed = flagsSchema.safeParse(flags);
      if (!parsed.success) throw new DraincheckError('DC_USAGE', firstIssue(parsed.error));
      const { serviceUrl, idPrefix, serviceReadyTimeoutMs, maxSeconds } = parsed.data;
      const settings = readLoadFlags(flags);
      const target = new URL(serviceUrl);

      const stopping = new AbortController();
      process.once('SIGTERM', () => stopping.abort());
      process.once('SIGINT', () => stopping.abort());
      const last = await serviceReady(target, serviceReadyTimeoutMs, stopping.signal);
      if (last !== 'ready') {
        if (stopping.signal.aborted) return;
        throw new DraincheckError(
          'DC_SERVICE_UNREACHABLE',
          `GET /healthz through the Service at ${target.origin} never answered 200 within ${serviceReadyTimeoutMs} ms (last: ${last})`,
        );
      }
      const { originMs, startedAt } = loadOrigin();
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(JSON.stringify({ kind: RECORD_FILE_KIND, startedAt }));
      let records = 0;
      const load = startLoad({
        target,
        ...settings,
        count: Math.ceil(settings.rate * maxSeconds),
        originMs,
        idPrefix,
        onRecord: (r) => {
          records += 1;
          out(recordLine(r));
        },
      });
      const onStop = () => load.stop();
      stopping.signal.addEventListener('abort', onStop, { once: true });
      const result = await load.done;
      stopping.signal.removeEventListener('abort', onStop);
      out(JSON.stringify({ kind: 'trailer', records, dropped: result.sinkErrors }));
    });
}

/** GET /healthz until 200 (bounded): 'ready', or the last answer seen. */
async function serviceReady(target: URL, limitMs: number, signal: AbortSignal): Promise<string> {
  const deadline = performance.now() + limitMs;
  let last = 'no answer';
  while (!signal.aborted && performance.now() < deadline) {
    last = await new Promise<string>((resolve) => {
      const req = http.get(new URL('/healthz', target), { agent: false, timeout: 1000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? 'ready' : `HTTP ${res.statusCode ?? 0}`));
        res.on('error', (e) => resolve(e.message));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
    });
    if (last === 'ready') return last;
    await abortableDelay(100, signal);
  }
  return last;
}
