// The user's own gRPC service as the target (`--protocol grpc --grpc-method package.Service/Method
// --grpc-proto FILE --grpc-request JSON`): the method found in the user's .proto file, loaded
// with @grpc/proto-loader as grpc-js users load theirs, and the request message made from the
// JSON template per run. Loaded only for such a run (it pulls in protobufjs). A file that does
// not parse, a method that is not there or not unary, a request field the message lacks: one
// DC_USAGE line each, before anything starts.
import { dirname } from 'node:path';
import protoLoader from '@grpc/proto-loader';
import { DraincheckError, quote } from '../errors.js';
import { renderJson, type GrpcWork } from './work-template.js';

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
    definition = protoLoader.loadSync(work.protoFile, {
      includeDirs: [dirname(work.protoFile)],
      // The field names as the .proto writes them (what --grpc-request's keys are checked
      // against; protobufjs's fromObject reads those and drops any other key silently), enums by
      // name, 64-bit integers as strings (a JSON number cannot hold them), absent fields left out.
      keepCase: true,
      enums: String,
      longs: String,
      defaults: false,
      oneofs: true,
    });
  } catch (error) {
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
