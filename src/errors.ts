// Every error a user can meet, in one place, each with a stable code and an exit code.
// The CLI prints `draincheck: <message>` (one line) for these; anything else is a bug and
// gets a stack trace. docs/ERRORS.md documents every code (a test keeps the two in step).

/** Process exit codes of the `draincheck` CLI (see README "Exit codes"). */
export const ExitCode = {
  /** The command ran (and matched `--expect` when given). */
  ok: 0,
  /** `run --expect`: the verdict differs. `server`: the drain timed out and cut requests. */
  mismatch: 1,
  /** Bad flag, bad value, bad input file. Nothing was started. */
  usage: 2,
  /** The run could not complete: platform failure, phase timeout, interrupted. Partial results are saved. */
  incomplete: 3,
  /**
   * `run`/`lab`: the runs ran, but cleanup failed and left objects in the cluster (named on
   * stderr with the `draincheck cleanup` command). 130 and 3 win over it; it wins over 1.
   */
  leftBehind: 4,
  /** `server`: the lab server could not listen on its address and port. */
  listenFailed: 5,
  /** Interrupted by Ctrl-C (SIGINT: 128 + 2, as shells report it), SIGTERM or SIGHUP. Partial results are saved. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const ErrorCodes = {
  DC_USAGE: { exit: ExitCode.usage, summary: 'A flag, argument or environment variable has a bad value.' },
  DC_INPUT_FILE: {
    exit: ExitCode.usage,
    summary: 'A file given on the command line cannot be read or is not what it should be.',
  },
  DC_LISTEN_FAILED: {
    exit: ExitCode.listenFailed,
    summary: 'The lab server could not listen on the address and port it was given.',
  },
  DC_PLATFORM_UNAVAILABLE: {
    exit: ExitCode.incomplete,
    summary: 'The chosen platform cannot run on this machine (e.g. no usable loopback address).',
  },
  DC_POD_FAILED: {
    exit: ExitCode.incomplete,
    summary: "The workload Pod's container could not start or exited before the experiment began.",
  },
  DC_KUBE_CONFIG: {
    exit: ExitCode.usage,
    summary: 'No usable kubeconfig, or the context named does not exist.',
  },
  DC_KUBE_UNREACHABLE: { exit: ExitCode.incomplete, summary: 'The Kubernetes API server cannot be reached.' },
  DC_KUBE_UNAUTHORIZED: {
    exit: ExitCode.incomplete,
    summary: 'The API server rejected the credentials (HTTP 401).',
  },
  DC_KUBE_FORBIDDEN: {
    exit: ExitCode.incomplete,
    summary: 'The credentials lack a permission draincheck needs (HTTP 403); see deploy/rbac-*.yaml.',
  },
  DC_KUBE_API: { exit: ExitCode.incomplete, summary: 'The API server answered an unexpected error.' },
  DC_IMAGE_PULL: { exit: ExitCode.incomplete, summary: 'The lab image cannot be pulled on the node.' },
  DC_POD_NOT_READY: {
    exit: ExitCode.incomplete,
    summary: 'The workload Pod never became Ready; the message shows its last readiness probe failure.',
  },
  DC_SERVICE_UNREACHABLE: {
    exit: ExitCode.incomplete,
    summary: 'The Pod is Ready, but GET /healthz through the Service never answered 200.',
  },
  DC_RESULT_WRITE: { exit: ExitCode.incomplete, summary: 'A result file could not be written.' },
  DC_INGRESS: {
    exit: ExitCode.incomplete,
    summary:
      'The ingress proxy (--ingress nginx|haproxy) could not run: nginx or HAProxy missing, it did not start, or it ended mid-run.',
  },
  DC_ALREADY_EXISTS: {
    exit: ExitCode.incomplete,
    summary: 'The embedded runtime already has an object of that kind and name (HTTP 409).',
  },
  DC_NOT_FOUND: {
    exit: ExitCode.incomplete,
    summary: 'The embedded runtime or the API server has no object of that kind and name (HTTP 404).',
  },
  DC_CONFLICT: {
    exit: ExitCode.incomplete,
    summary: 'The object is not the one named: another UID, or changed since it was read (HTTP 409).',
  },
  DC_OUTPUT_PATH: {
    exit: ExitCode.usage,
    summary: 'An output path (--out, --html) cannot be created, is not a directory or is not writable.',
  },
  DC_KUBE_INVALID: {
    exit: ExitCode.incomplete,
    summary: 'The API server refused an object as invalid (HTTP 422); the message names the field.',
  },
  DC_SOURCE_REFUSED: {
    exit: ExitCode.usage,
    summary: "run --from: the Deployment's copy would get node access or be selected; nothing created.",
  },
} as const;
export type ErrorCode = keyof typeof ErrorCodes;

export interface DraincheckErrorOptions {
  /** What the user can do about it; printed after the message. */
  hint?: string;
  cause?: unknown;
}

/** A user-facing error: a stable code, a one-line message and the exit code it maps to. */
export class DraincheckError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: DraincheckErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DraincheckError';
    this.code = code;
    this.exitCode = ErrorCodes[code].exit;
    this.hint = options.hint;
  }

  /** The single line the CLI prints. */
  oneLine(): string {
    return this.hint ? `${this.message} (${this.hint})` : this.message;
  }
}

export function isDraincheckError(e: unknown): e is DraincheckError {
  return e instanceof DraincheckError;
}

/** Quote a value received from a user the way it should appear in a message. */
export function quote(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
