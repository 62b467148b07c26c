// `draincheck load`: the open-loop load generator (src/probe/load/) as a process of its own —
// what the load Pod of `draincheck rollout --platform kube` runs, so that the load takes the
// cluster's Service path. It waits until GET /healthz through the Service answers 200, prints
// the record header, then one NDJSON record per request on stdout. SIGTERM (the Pod's
// deletion), SIGINT or --max-seconds stop it (issue 23.4): nothing new is sent, requests
// waiting for a connection are recorded not-sent, those in flight get --stop-wait-ms to
// finish (then they are abandoned and recorded), the trailer is printed and it exits.
import { Command } from 'commander';
import { z } from 'zod';
import { DraincheckError } from '../../errors.js';
import { getHealthz } from '../../probe/healthz.js';
import { loadOrigin, loadTransport, startLoad } from '../../probe/load/generator.js';
import { LOAD_SECONDS_MAX, loadDefaults } from '../../probe/load/options.js';
import { forProtocol, loadSettings } from '../../probe/load/settings.js';
import { RECORD_FILE_KIND, recordLine } from '../../probe/load/record-file.js';
import { WORK_MS_MAX } from '../../server/work-params.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { integerSchema, TIMER_MAX_MS } from '../../util/integer.js';
import { readSettings, setting } from '../../util/setting-rows.js';
import { addSettingFlags } from '../setting-flags.js';
import { firstIssue } from '../zod-issue.js';

const serviceUrlSchema = z.url({ protocol: /^http$/, error: '--service-url must be an http:// URL' });

/**
 * `draincheck load`'s own settings as rows (src/util/setting-rows.ts), beyond the load's: how
 * the runner starts and bounds it. Not in a document: the rollout's plan sets them
 * (src/platform/kube/load-pod.ts).
 */
export const loadCommandSettings = {
  idPrefix: setting<string, null, 'none'>({
    flag: '--id-prefix',
    arg: '<prefix>',
    help: 'work ids are <prefix><seq> (1-40 characters of A-Z a-z 0-9 . _ -)',
    default: 'L',
    schema: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,40}$/, { error: '--id-prefix must be 1-40 characters of A-Z a-z 0-9 . _ -' }),
    text: String,
    sample: 'drain-',
    badSample: 'a b',
    document: null,
    fact: null,
  }),
  serviceReadyTimeoutMs: setting<number, null, 'none'>({
    flag: '--service-ready-timeout-ms',
    arg: '<ms>',
    help: 'give up waiting for GET /healthz 200 (each attempt has 1 s for its whole answer)',
    default: 60_000,
    schema: integerSchema({ label: '--service-ready-timeout-ms', min: 1, max: TIMER_MAX_MS }),
    text: String,
    sample: '2000',
    badSample: '0',
    document: null,
    fact: null,
  }),
  hostHeader: setting<string | null, null, 'none'>({
    flag: '--host-header',
    arg: '<host>',
    help: 'send every request (the /healthz wait too) with this Host header instead of the URL’s: --service-url is then an ingress controller that routes by host (HTTP/1.1 only; `rollout --ingress-url` sets it)',
    default: null,
    defaultNote: "the URL's host",
    schema: z.string().transform((text, ctx): string => {
      const t = text.trim().toLowerCase();
      // A host (RFC 9110 §7.2: uri-host [":" port]) as names are written: DNS labels, a port.
      if (
        t.length <= 253 &&
        /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:\d{1,5})?$/.test(t)
      )
        return t;
      ctx.addIssue({
        code: 'custom',
        message: `--host-header must be a host name (letters, digits, '-' and '.', an optional :port), got ${JSON.stringify(text.slice(0, 100))}`,
      });
      return z.NEVER;
    }),
    text: (v) => v ?? '',
    sample: 'work.r1.draincheck.invalid',
    badSample: 'a b',
    document: null,
    fact: null,
  }),
  maxSeconds: setting<number, null, 'none'>({
    flag: '--max-seconds',
    arg: '<s>',
    help: `stop offering after this long whatever happens (1 to ${LOAD_SECONDS_MAX})`,
    default: LOAD_SECONDS_MAX,
    schema: integerSchema({ label: '--max-seconds', min: 1, max: LOAD_SECONDS_MAX }),
    text: String,
    sample: '30',
    badSample: '0',
    document: null,
    fact: null,
  }),
  stopWaitMs: setting<number, null, 'none'>({
    flag: '--stop-wait-ms',
    arg: '<ms>',
    help: 'once stopped (signal or --max-seconds), how long requests in flight may take to finish before they are abandoned',
    // The response timeout: a request in flight could not have taken longer anyway.
    default: loadDefaults.responseTimeoutMs,
    schema: integerSchema({ label: '--stop-wait-ms', min: 0, max: TIMER_MAX_MS }),
    text: String,
    sample: '500',
    badSample: '-1',
    document: null,
    fact: null,
  }),
};

/**
 * The load's settings: the rows `draincheck rollout` passes to the load Pod
 * (src/platform/kube/load-pod.ts), read back here by the same rows.
 */
const settingRows = loadSettings(WORK_MS_MAX);

/** The load's settings from commander's options (DC_USAGE with the row's message when bad). */
export const readLoadFlags = (flags: Record<string, unknown>) => readSettings(settingRows, flags);

/** One readiness attempt's whole answer within this long (a total deadline, not an idle one). */
const READY_ATTEMPT_MS = 1000;

export function loadCommand(): Command {
  const command = new Command('load')
    .summary('send open-loop load to a Service URL, one NDJSON record per request (used in the load Pod)')
    .description(
      'Wait until GET /healthz through the Service answers 200, then send GET /work at a fixed rate (open loop) until SIGTERM or --max-seconds, and print one draincheck.load-records/v1 line per request on stdout. On SIGTERM the requests in flight finish and are printed before the exit.',
    )
    .requiredOption('--service-url <url>', 'the Service, e.g. http://10.96.0.12:80');
  addSettingFlags(command, settingRows);
  return addSettingFlags(command, loadCommandSettings).action(
    async (flags: Record<string, string | boolean | undefined>) => {
      const parsed = serviceUrlSchema.safeParse(flags.serviceUrl);
      if (!parsed.success) throw new DraincheckError('DC_USAGE', firstIssue(parsed.error));
      const serviceUrl = parsed.data;
      const { idPrefix, serviceReadyTimeoutMs, maxSeconds, stopWaitMs, hostHeader } = readSettings(
        loadCommandSettings,
        flags,
      );
      // h2c: its own default connections, and the HTTP/1.1 pool's settings refused (DC_USAGE).
      const settings = forProtocol(readLoadFlags(flags), flags);
      if (hostHeader !== null && settings.protocol !== 'http1')
        throw new DraincheckError(
          'DC_USAGE',
          `--host-header is sent by the HTTP/1.1 load only, not with --protocol ${settings.protocol}`,
        );
      const target = new URL(serviceUrl);

      const stopping = new AbortController();
      process.once('SIGTERM', () => stopping.abort());
      process.once('SIGINT', () => stopping.abort());
      const last = await serviceReady(target, serviceReadyTimeoutMs, stopping.signal, hostHeader);
      if (last !== 'ready') {
        if (stopping.signal.aborted) return;
        // Through an ingress the route is the ingress's until it answers: a 404 is its default
        // backend (no rule for the host yet), not the Service's.
        throw new DraincheckError(
          'DC_SERVICE_UNREACHABLE',
          hostHeader !== null
            ? `the ingress at ${target.origin} never routed host ${hostHeader} to the Service: GET /healthz with that Host header never answered 200 within ${serviceReadyTimeoutMs} ms (last: ${last})`
            : `GET /healthz through the Service at ${target.origin} never answered 200 within ${serviceReadyTimeoutMs} ms (last: ${last})`,
        );
      }
      await loadTransport(settings.protocol);
      const { originMs, startedAt } = loadOrigin();
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(JSON.stringify({ kind: RECORD_FILE_KIND, startedAt }));
      let records = 0;
      const load = startLoad({
        target,
        ...(hostHeader !== null ? { hostHeader } : {}),
        ...settings,
        count: Math.ceil(settings.rate * maxSeconds),
        originMs,
        idPrefix,
        onRecord: (r) => {
          // Requests, not lines: an attempt the client sent again (--retry) is a line more.
          if (r.retried !== true) records += 1;
          out(recordLine(r));
        },
      });
      // Stopped by a signal or the deadline: nothing new, the queue not-sent, the requests in
      // flight bounded by --stop-wait-ms (the Pod's grace period covers it: load-pod.ts).
      let abandonTimer: NodeJS.Timeout | undefined;
      const onStop = () => {
        load.stop({ queued: 'not-sent' });
        abandonTimer ??= setTimeout(() => load.stop({ abandon: true }), stopWaitMs);
      };
      const deadline = setTimeout(onStop, maxSeconds * 1000);
      stopping.signal.addEventListener('abort', onStop, { once: true });
      const result = await load.done;
      clearTimeout(deadline);
      clearTimeout(abandonTimer);
      stopping.signal.removeEventListener('abort', onStop);
      out(
        JSON.stringify({
          kind: 'trailer',
          records,
          dropped: result.sinkErrors,
          // The client's own facts: what it retried, closed idle, and whether it kept its schedule.
          retried: result.retried,
          idleClosed: result.idleClosed,
          eventLoopDelay: result.eventLoopDelay,
          scheduleLag: result.scheduleLag,
          // Its container's CPU: the limit, the use and how often the kernel throttled it.
          cpu: result.cpu,
        }),
      );
    },
  );
}

/** GET /healthz until 200, each attempt and the whole wait bounded: 'ready', or the last answer seen. */
async function serviceReady(
  target: URL,
  limitMs: number,
  signal: AbortSignal,
  hostHeader: string | null,
): Promise<string> {
  const deadline = performance.now() + limitMs;
  let last = 'no answer';
  while (!signal.aborted && performance.now() < deadline) {
    const left = Math.max(1, Math.ceil(deadline - performance.now()));
    const attemptMs = Math.min(READY_ATTEMPT_MS, left);
    const answer = await getHealthz(target, attemptMs, signal, hostHeader ?? undefined);
    if (answer === 'ready') return answer;
    // An attempt the wait's own end cut short says nothing of the Service (or the ingress): the
    // answer before it (a 404 from an ingress's default backend) is the one to report.
    if (attemptMs === READY_ATTEMPT_MS || last === 'no answer' || !answer.startsWith('no whole answer'))
      last = answer;
    await abortableDelay(Math.min(100, Math.max(0, deadline - performance.now())), signal);
  }
  return last;
}
