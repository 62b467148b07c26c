// `-f FILE`: the user's own Deployment or Pod as the run's workload. Only the first Deployment's
// pod template (or the first Pod) is read, and of it only what the experiment runs: the first
// container's command/args/env/workingDir/ports/probes (readiness, liveness, startup)/lifecycle and the Pod's
// terminationGracePeriodSeconds. The user's labels, name and namespace are never used — the
// workload gets draincheck's own (a ReplicaSet whose selector matched the copy would adopt it,
// and the user's Services would send it traffic). The file is untrusted input: bounded in size,
// document count and alias expansion; every problem is one line naming the file and the field.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { V1Container, V1PodSpec, V1Probe } from '@kubernetes/client-node';
import type * as Yaml from 'yaml';
import { DraincheckError, quote } from '../errors.js';
import { parseInteger } from '../util/integer.js';
import { checkProbe, type ProbeKind } from './probe-fields.js';

/** A manifest is a few KiB; anything this large is not one. */
export const POD_FILE_MAX_BYTES = 1024 * 1024;
export const POD_FILE_MAX_DOCUMENTS = 100;

/**
 * The YAML parser, loaded the first time a file is read: its ~70 modules cost every command
 * ~35 ms at start-up (measured on `lab --help`), and most runs read no file. The package's
 * `node` export is CommonJS, so `require` gives the very module an `import` would.
 */
function yaml(): typeof Yaml {
  return createRequire(import.meta.url)('yaml') as typeof Yaml;
}

/** What the run takes from the file. */
export interface FilePod {
  /** The file as given on the command line (for messages and the run document). */
  file: string;
  /** Where in the file the Pod spec was found, e.g. `Deployment web`. */
  source: string;
  container: V1Container;
  /** The Pod's own grace period; absent: Kubernetes' default (30 s). */
  terminationGracePeriodSeconds: number | undefined;
  /** Fields of the file's Pod spec and first container that the run does not use (said on a cluster). */
  dropped?: string[];
  /**
   * The node-access fields the file sets (host namespaces, privileged, added capabilities,
   * hostPath volumes, host ports), each by its path: the embedded runtime applies none of them
   * and says so (run.ts); on a cluster they are among `dropped` (hostPort is copied with ports).
   */
  nodeAccess?: string[];
  /**
   * What the platform chosen did not apply of the file, as said on stderr and kept in the run
   * document: on a cluster `dropped`; on the embedded runtime `nodeAccess` and `dropped`.
   */
  notApplied?: string[];
  /**
   * `--from deployment/NAME`: the whole pod template spec, copied as it is (volumes, service
   * account, pull secrets, every container) except what makes it draincheck's bare Pod.
   */
  podSpec?: V1PodSpec;
}

export interface PodFileOptions {
  /**
   * A real cluster runs the container's image, so a container without a command runs the
   * image's entrypoint. The embedded runtime runs only commands. Either way only the fields
   * listed below are taken: host access, volumes, a security context are never copied.
   */
  runsImages?: boolean;
  /**
   * The embedded runtime runs the command on this machine: workingDir is a path here, and a
   * directory that does not exist is refused with the field's path before anything starts.
   */
  embedded?: boolean;
}

/**
 * The first container's fields the run takes as written, besides its name, image and command:
 * the one list the manifests replace the lab container's with and the "not used" line checks.
 */
export const FILE_CONTAINER_FIELDS = [
  'args',
  'env',
  'workingDir',
  'ports',
  'readinessProbe',
  'livenessProbe',
  'startupProbe',
  'lifecycle',
] as const;

/** What the run takes of the file; every other field is dropped (and said so on a cluster). */
const USED_CONTAINER_FIELDS = new Set<string>(['name', 'image', 'command', ...FILE_CONTAINER_FIELDS]);
const USED_SPEC_FIELDS = new Set(['containers', 'terminationGracePeriodSeconds']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readPodFile(file: string, options: PodFileOptions = {}): FilePod {
  let text: string;
  try {
    if (statSync(file).size > POD_FILE_MAX_BYTES)
      throw new DraincheckError(
        'DC_INPUT_FILE',
        `-f ${quote(file)} is larger than ${POD_FILE_MAX_BYTES} bytes`,
      );
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof DraincheckError) throw error;
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `-f ${quote(file)} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return parsePodFile(file, text, options);
}

export function parsePodFile(file: string, text: string, options: PodFileOptions = {}): FilePod {
  const fail = (message: string): never => {
    throw new DraincheckError('DC_INPUT_FILE', `-f ${quote(file)}: ${message}`);
  };
  if (text.length > POD_FILE_MAX_BYTES) fail(`larger than ${POD_FILE_MAX_BYTES} bytes`);
  const docs = yaml().parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) fail('not YAML documents');
  const list = docs as Exclude<typeof docs, { empty: true }>;
  if (list.length > POD_FILE_MAX_DOCUMENTS) fail(`more than ${POD_FILE_MAX_DOCUMENTS} YAML documents`);
  for (const [i, doc] of list.entries()) {
    const error = doc.errors[0];
    if (!error) continue;
    const line = error.linePos?.[0].line;
    fail(`not valid YAML (document ${i + 1}${line ? `, line ${line}` : ''}): ${oneLine(error.message)}`);
  }
  for (const doc of list) {
    let value: unknown;
    try {
      // A billion-laughs file expands aliases without end: the library stops it at this count.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      fail(`cannot be read as YAML: ${oneLine((error as Error).message)}`);
    }
    if (!isObj(value)) continue;
    const name = isObj(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : '';
    if (value.kind === 'Pod')
      return fromPodSpec(file, `Pod ${name}`.trim(), value.spec, 'spec', fail, options);
    if (value.kind === 'Deployment') {
      const template = isObj(value.spec) ? value.spec.template : undefined;
      return fromPodSpec(
        file,
        `Deployment ${name}`.trim(),
        isObj(template) ? template.spec : undefined,
        'spec.template.spec',
        fail,
        options,
      );
    }
  }
  return fail('has no Pod or Deployment (kind: Pod or kind: Deployment)');
}

function fromPodSpec(
  file: string,
  source: string,
  spec: unknown,
  at: string,
  fail: (message: string) => never,
  options: PodFileOptions,
): FilePod {
  if (!isObj(spec)) return fail(`${source}: ${at} is missing`);

  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0 || !isObj(containers[0]))
    return fail(`${source}: ${at}.containers has no container`);
  const c = containers[0];
  const field = (name: string) => `${source}: ${at}.containers[0].${name}`;
  const strings = (name: string): string[] | undefined => {
    const v = c[name];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' || typeof s === 'number'))
      return fail(`${field(name)} must be a list of strings`);
    return v.map(String);
  };
  const command = strings('command');
  const args = strings('args');
  const containerName = typeof c.name === 'string' ? c.name : 'the first container';
  if ((!command || command.length === 0) && options.runsImages && typeof c.image !== 'string')
    fail(`container ${quote(containerName)} has neither command nor image`);
  if ((!command || command.length === 0) && !options.runsImages) {
    // The embedded runtime runs processes, not images: say what would run and how to say it.
    const image = typeof c.image === 'string' ? ` (image ${quote(c.image)})` : '';
    fail(
      `container ${quote(containerName)}${image} has no command; the embedded runtime does not run images — add command: [...] to the container, or give the server with --server-command`,
    );
  }
  const env = c.env;
  if (
    env !== undefined &&
    env !== null &&
    (!Array.isArray(env) || !env.every((e) => isObj(e) && typeof e.name === 'string'))
  )
    fail(`${field('env')} must be a list of {name, value}`);
  if (Array.isArray(env))
    for (const [i, e] of (env as { name: string }[]).entries())
      if (!isEnvVarName(e.name))
        fail(
          `${field(`env[${i}].name`)} ${quote(e.name)} is not a valid environment variable name: Kubernetes takes printable ASCII characters other than '=' (IsRelaxedEnvVarName)`,
        );
  const ports = c.ports;
  if (
    ports !== undefined &&
    ports !== null &&
    (!Array.isArray(ports) ||
      !ports.every(
        (p) => isObj(p) && typeof p.containerPort === 'number' && portNumber(p.containerPort) !== undefined,
      ))
  )
    fail(`${field('ports')} must be a list of {containerPort}`);
  if (c.workingDir !== undefined && typeof c.workingDir !== 'string')
    fail(`${field('workingDir')} must be a string`);
  // On this machine a missing directory would surface as `spawn setpriv ENOENT` (Node names
  // the program, not the directory): said here, before anything starts.
  if (options.embedded && typeof c.workingDir === 'string' && !isDirectory(c.workingDir))
    fail(
      `${field('workingDir')} ${quote(c.workingDir)} does not exist as a directory on this machine (the embedded runtime runs the command here)`,
    );
  // Each probe checked and defaulted as the API server would (probe-fields.ts): a 0 period is
  // Kubernetes' 10 s, a negative or beyond-int32 one is refused with its path.
  const probes: Partial<Record<'readinessProbe' | 'livenessProbe' | 'startupProbe', V1Probe>> = {};
  for (const [probe, kind] of [
    ['readinessProbe', 'readiness'],
    ['livenessProbe', 'liveness'],
    ['startupProbe', 'startup'],
  ] as const satisfies readonly (readonly [string, ProbeKind])[]) {
    const value = c[probe];
    if (value === undefined || value === null) continue;
    if (!isObj(value)) fail(`${field(probe)} must be a map`);
    const checked = checkProbe(value, `${source}: ${at}.containers[0].${probe}`, kind);
    if (!checked.ok) return fail(checked.message);
    probes[probe] = checked.probe;
  }
  if (c.lifecycle !== undefined && c.lifecycle !== null && !isObj(c.lifecycle))
    fail(`${field('lifecycle')} must be a map`);
  const grace = spec.terminationGracePeriodSeconds;
  if (
    grace !== undefined &&
    grace !== null &&
    !parseInteger(grace, { label: 'terminationGracePeriodSeconds', min: 0, max: 86_400 }).ok
  )
    fail(`${source}: ${at}.terminationGracePeriodSeconds must be a whole number of seconds`);
  const container: V1Container = {
    name: containerName,
    ...(typeof c.image === 'string' ? { image: c.image } : {}),
    ...(command && command.length > 0 ? { command } : {}),
    ...(args ? { args } : {}),
    ...(env ? { env: env as V1Container['env'] } : {}),
    ...(typeof c.workingDir === 'string' ? { workingDir: c.workingDir } : {}),
    ...(ports ? { ports: ports as V1Container['ports'] } : {}),
    ...probes,
    ...(isObj(c.lifecycle) ? { lifecycle: c.lifecycle } : {}),
  };
  const dropped = [
    ...Object.keys(spec)
      .filter((k) => !USED_SPEC_FIELDS.has(k))
      .map((k) => `${at}.${k}`),
    ...(containers.length > 1 ? [`${at}.containers[1..]`] : []),
    ...Object.keys(c)
      .filter((k) => !USED_CONTAINER_FIELDS.has(k))
      .map((k) => `${at}.containers[0].${k}`),
  ].slice(0, 50);
  const nodeAccess = nodeAccessFields(spec, c, at);
  return {
    file,
    source,
    container,
    terminationGracePeriodSeconds: grace === undefined || grace === null ? undefined : (grace as number),
    ...(dropped.length > 0 ? { dropped } : {}),
    ...(nodeAccess.length > 0 ? { nodeAccess } : {}),
  };
}

/**
 * Kubernetes' environment variable names (k8s.io/apimachinery pkg/util/validation
 * IsRelaxedEnvVarName, the rule since RelaxedEnvironmentVariableValidation, GA in 1.34): one or
 * more printable ASCII characters, none of them '='. The stricter C-identifier-like
 * IsEnvVarName of older API servers also refuses everything this refuses (`A=B`, a newline).
 */
export function isEnvVarName(name: string): boolean {
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(name);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The node-access fields set in the Pod spec and its first container, by path: host
 * namespaces, a privileged container, added capabilities, hostPath volumes and host ports.
 * At most 50, like `dropped`.
 */
function nodeAccessFields(spec: Obj, c: Obj, at: string): string[] {
  const out: string[] = [];
  for (const name of ['hostPID', 'hostNetwork', 'hostIPC'])
    if (spec[name] === true) out.push(`${at}.${name}`);
  const sc = isObj(c.securityContext) ? c.securityContext : {};
  if (sc.privileged === true) out.push(`${at}.containers[0].securityContext.privileged`);
  if (isObj(sc.capabilities) && Array.isArray(sc.capabilities.add) && sc.capabilities.add.length > 0)
    out.push(`${at}.containers[0].securityContext.capabilities.add`);
  if (Array.isArray(spec.volumes))
    for (const [i, v] of spec.volumes.entries())
      if (isObj(v) && v.hostPath !== undefined && v.hostPath !== null)
        out.push(`${at}.volumes[${i}].hostPath`);
  if (Array.isArray(c.ports))
    for (const [i, p] of c.ports.entries())
      if (isObj(p) && p.hostPort !== undefined && p.hostPort !== null)
        out.push(`${at}.containers[0].ports[${i}].hostPort`);
  return out.slice(0, 50);
}

/** The container port the target is reached on: the readiness probe's httpGet port, else the first port. */
export function filePodPort(pod: FilePod): number | undefined {
  const c = pod.container;
  const port = c.readinessProbe?.httpGet?.port;
  if (typeof port === 'number') return port;
  if (typeof port === 'string') {
    const numbered = portNumber(port);
    if (numbered !== undefined) return numbered;
    const named = c.ports?.find((p) => p.name === port)?.containerPort;
    if (named !== undefined) return named;
  }
  return c.ports?.[0]?.containerPort;
}

/** The health path: the readiness probe's httpGet path, where the file gives one. */
export function filePodHealthPath(pod: FilePod): string | undefined {
  return pod.container.readinessProbe?.httpGet?.path;
}

function portNumber(raw: unknown): number | undefined {
  const parsed = parseInteger(raw, { label: 'port', min: 1, max: 65_535 });
  return parsed.ok ? parsed.value : undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}
