// The user's own gRPC service as the target (`--protocol grpc --grpc-method package.Service/Method
// --grpc-proto FILE --grpc-request JSON`): the method found in the user's .proto file, loaded
// with @grpc/proto-loader as grpc-js users load theirs, and the request message made from the
// JSON template per run. Loaded only for such a run (it pulls in protobufjs). A file that does
// not parse, a method that is not there or not unary, a request field the message lacks: one
// DC_USAGE line each, before anything starts.
// On a cluster the client Pod cannot read the runner's file: the runner loads it (imports from
// its folder, as here) and hands the Pod its definitions as protobufjs JSON (grpcDescriptor);
// both sides then check the call with the same code (grpcCallShape on the descriptor).
import { accessSync, constants } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { DraincheckError, quote } from '../errors.js';
import { parseJsonBounded } from '../util/bounded-json.js';
import { GRPC_DESCRIPTOR_ENV, renderJson, type GrpcWork } from './work-template.js';

/**
 * The descriptor's bound: the client Pod gets it in one environment variable, and Linux's
 * execve takes at most MAX_ARG_STRLEN (32 pages, 128 KiB) per variable
 * (include/uapi/linux/binfmts.h) — the container runtime execs the container's process with it.
 */
export const GRPC_DESCRIPTOR_MAX_BYTES = 96 * 1024;
/** protobufjs JSON nests a level per package part and message: far below this. */
const GRPC_DESCRIPTOR_MAX_DEPTH = 64;
/**
 * Namespaces (package parts, messages with nested types) a descriptor may hold. protobufjs
 * resolves a relative type name by searching every namespace and caches each miss in each
 * (Namespace.lookup): cost and memory grow as namespaces × references, so a crafted 96 KiB
 * descriptor of 2,250 empty namespaces and 1,080 unresolvable fields took 1.7 s of CPU and
 * 120 MB — near the client Pod's memory limit. Real .proto files of this size have tens.
 */
export const GRPC_DESCRIPTOR_MAX_NAMESPACES = 400;

/** How many objects with a `nested` map a protobufjs JSON tree holds (bounded depth: checked before). */
function namespaceCount(value: unknown, depth = 0): number {
  if (!value || typeof value !== 'object' || depth > GRPC_DESCRIPTOR_MAX_DEPTH) return 0;
  const nested = (value as { nested?: unknown }).nested;
  if (!nested || typeof nested !== 'object') return 0;
  let n = 1;
  for (const child of Object.values(nested)) {
    n += namespaceCount(child, depth + 1);
    if (n > GRPC_DESCRIPTOR_MAX_NAMESPACES) return n;
  }
  return n;
}

/**
 * How the definitions are read: the field names as the .proto writes them (what --grpc-request's
 * keys are checked against; protobufjs's fromObject reads those and drops any other key
 * silently), enums by name, 64-bit integers as strings (a JSON number cannot hold them), absent
 * fields left out.
 */
const loaderOptions = {
  keepCase: true,
  enums: String,
  longs: String,
  defaults: false,
  oneofs: true,
} satisfies protoLoader.Options;

/** What a unary call of the user's method needs: its path and its message codecs. */
export interface GrpcCallShape {
  /** `/package.Service/Method`. */
  method: string;
  /** The request message's name (e.g. `PlaceRequest`). */
  requestType: string;
  serialize: (value: unknown) => Buffer;
  deserialize: (bytes: Buffer) => Record<string, unknown>;
  /** The request message for one run, from the JSON template. */
  message: (values: { ms: number; id: string }) => Record<string, unknown>;
}

/** A protobufjs message as proto-loader describes it (a DescriptorProto). */
interface MessageDescriptor {
  name?: string;
  field?: Array<{ name?: string }>;
}

/** A parse or load error, made one line and bounded (protobufjs names the file and line). */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

const cache = new Map<string, GrpcCallShape>();

/** The call the work is, checked against the .proto file; throws DC_USAGE for what does not fit. */
export function grpcCallShape(work: GrpcWork): GrpcCallShape {
  const key = JSON.stringify(work);
  const cached = cache.get(key);
  if (cached) return cached;
  let definition: protoLoader.PackageDefinition;
  try {
    definition =
      work.descriptor === undefined
        ? protoLoader.loadSync(work.protoFile, { includeDirs: [dirname(work.protoFile)], ...loaderOptions })
        : fromDescriptor(work.descriptor);
  } catch (error) {
    if (error instanceof DraincheckError) throw error;
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-proto ${quote(work.protoFile)} cannot be loaded: ${oneLine(error)}`,
    );
  }
  const slash = work.method.lastIndexOf('/');
  const serviceName = work.method.slice(1, slash);
  const methodName = work.method.slice(slash + 1);
  const service = definition[serviceName] as
    Record<string, protoLoader.MethodDefinition<object, object>> | undefined;
  const services = Object.entries(definition)
    .filter(([, d]) => !('format' in d) && typeof d === 'object')
    .map(([name]) => name);
  if (!service || 'format' in service)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-method ${work.method.slice(1)}: no service ${serviceName} in ${quote(work.protoFile)} (services: ${services.slice(0, 8).join(', ') || 'none'})`,
    );
  const method = service[methodName];
  if (!method)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-method ${work.method.slice(1)}: ${serviceName} has no method ${methodName} (methods: ${Object.keys(service).slice(0, 12).join(', ')})`,
    );
  if (method.requestStream || method.responseStream)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-method ${work.method.slice(1)} is a streaming method: the work is one unary call`,
    );
  const requestType = method.requestType.type as MessageDescriptor;
  const fields = new Set((requestType.field ?? []).flatMap((f) => (f.name ? [f.name] : [])));
  const message = (values: { ms: number; id: string }) =>
    JSON.parse(renderJson(work.request, values)) as Record<string, unknown>;
  // The top-level keys name fields of the request message: protobufjs's fromObject drops an
  // unknown key silently, and a request without its fields is not the work the user meant.
  // (Nested messages are left to fromObject.)
  const sample = message({ ms: 0, id: 'work-0' });
  for (const key of Object.keys(sample))
    if (!fields.has(key))
      throw new DraincheckError(
        'DC_USAGE',
        `--grpc-request: ${quote(key)} is not a field of ${requestType.name ?? 'the request message'} (fields: ${[...fields].slice(0, 16).join(', ') || 'none'})`,
      );
  try {
    method.requestSerialize(sample);
  } catch (error) {
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-request does not make a ${requestType.name ?? 'request'}: ${oneLine(error)}`,
    );
  }
  const shape: GrpcCallShape = {
    method: work.method,
    requestType: requestType.name ?? '',
    serialize: (value) => method.requestSerialize(value as object),
    deserialize: (bytes) => method.responseDeserialize(bytes) as Record<string, unknown>,
    message,
  };
  cache.set(key, shape);
  return shape;
}

/**
 * --platform kube: the .proto file's definitions, its imports included, as protobufjs JSON
 * text — what the client Pod loads (its environment, src/platform/kube/client-pod.ts). Read as
 * @grpc/proto-loader's loadSync reads it (util.js loadProtosWithOptionsSync: a Root whose
 * imports resolve in the include folders first, google/protobuf's well-known types from
 * protobufjs's bundle), so the embedded runtime's rule holds on a cluster too: imports from
 * the file's folder. Bounded (GRPC_DESCRIPTOR_MAX_BYTES): one DC_USAGE line beyond.
 */
export function grpcDescriptor(protoFile: string): string {
  // google/protobuf/descriptor.proto (and api, type, source_context) resolve from protobufjs's
  // bundle only because importing @grpc/proto-loader registers them (its addCommonProtos): keep
  // that import even where this module would not need it otherwise.
  const includeDirs = [dirname(protoFile)];
  const root = new protobuf.Root();
  const resolvePath = root.resolvePath.bind(root);
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target;
    for (const directory of includeDirs) {
      const full = join(directory, target);
      try {
        accessSync(full, constants.R_OK);
        return full;
      } catch {
        continue;
      }
    }
    return resolvePath(origin, target);
  };
  let text: string;
  try {
    root.loadSync(protoFile, { keepCase: true });
    root.resolveAll();
    text = JSON.stringify(root.toJSON());
  } catch (error) {
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-proto ${quote(protoFile)} cannot be loaded: ${oneLine(error)}`,
    );
  }
  const namespaces = namespaceCount(JSON.parse(text) as unknown);
  if (namespaces > GRPC_DESCRIPTOR_MAX_NAMESPACES)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-proto ${quote(protoFile)} with --platform kube: its definitions (imports included) hold more than ${GRPC_DESCRIPTOR_MAX_NAMESPACES} namespaces (packages and messages with nested types), the most the client Pod loads`,
    );
  const bytes = Buffer.byteLength(text);
  if (bytes > GRPC_DESCRIPTOR_MAX_BYTES)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-proto ${quote(protoFile)} with --platform kube: its definitions (imports included) take ${bytes} bytes, more than ${GRPC_DESCRIPTOR_MAX_BYTES} (the client Pod gets them in one environment variable)`,
    );
  return text;
}

/** The definitions a runner handed over (untrusted in a Pod: bounded, then loaded as proto-loader's fromJSON does). */
function fromDescriptor(text: string): protoLoader.PackageDefinition {
  const bad = (why: string) =>
    new DraincheckError('DC_USAGE', `the gRPC definitions (${GRPC_DESCRIPTOR_ENV}) ${why}`);
  if (Buffer.byteLength(text) > GRPC_DESCRIPTOR_MAX_BYTES)
    throw bad(`are longer than ${GRPC_DESCRIPTOR_MAX_BYTES} bytes`);
  const parsed = parseJsonBounded(text, {
    maxChars: GRPC_DESCRIPTOR_MAX_BYTES,
    maxDepth: GRPC_DESCRIPTOR_MAX_DEPTH,
  });
  if (!parsed.ok) throw bad(`are not protobufjs JSON (${parsed.reason})`);
  if (!parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value))
    throw bad('are not protobufjs JSON (not an object)');
  if (namespaceCount(parsed.value) > GRPC_DESCRIPTOR_MAX_NAMESPACES)
    throw bad(`hold more than ${GRPC_DESCRIPTOR_MAX_NAMESPACES} namespaces`);
  try {
    return protoLoader.fromJSON(parsed.value, loaderOptions);
  } catch (error) {
    throw bad(`cannot be loaded: ${oneLine(error)}`);
  }
}
