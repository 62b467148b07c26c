// The experiment kinds draincheck knows, by the `schema` string their documents carry. Adding a
// kind is its folder (or file) in src/kinds/ and one line in `experimentKinds` below.
import { DraincheckError, quote } from '../errors.js';
import { documentKind } from '../results/read.js';
import { truncateText } from '../util/bounded-json.js';
import type { AnyKind, RenderContext, ReportFormat } from './kind.js';
import { rolloutKind } from './rollout/index.js';
import { runKind } from './run/index.js';

/**
 * A kind with its document type erased, so kinds of different documents sit in one list: every
 * document handed to its renderers was validated by its own documentSchema first.
 */
export interface RegisteredKind {
  schema: string;
  noun: string;
  /** The value as a document of this kind, or the first problem (path: message). */
  validate(value: unknown): { ok: true; doc: unknown } | { ok: false; problem: string };
  /** The text or HTML report of documents of this kind. */
  render(format: Exclude<ReportFormat, 'json'>, docs: unknown[], context: RenderContext): Promise<string>;
  /** One document as the JSON value printed for it. */
  json(doc: unknown): unknown;
}

export function registerKind<Doc extends { schema: string }>(kind: AnyKind<Doc>): RegisteredKind {
  return {
    schema: kind.schema,
    noun: kind.noun,
    validate(value) {
      const parsed = kind.documentSchema.safeParse(value);
      if (parsed.success) return { ok: true, doc: parsed.data };
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        problem: issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid',
      };
    },
    // Documents reach these only after validate() above (src/kinds/read.ts): the one place
    // their type comes back.
    render: async (format, docs, context) => kind.renderers[format](docs as Doc[], context),
    json: (doc) => kind.renderers.json(doc as Doc),
  };
}

/** Every kind, in the order their documents are reported. */
export const experimentKinds: readonly RegisteredKind[] = [registerKind(runKind), registerKind(rolloutKind)];

/** The kind a document's `schema` string names; the only registered one when it names none. */
export function kindOf(value: unknown, name: string, kinds = experimentKinds): RegisteredKind {
  const schema = documentKind(value);
  // A document without a schema string is held to the first kind, so its error names the
  // field that is wrong (`schema: Invalid input`), as before there were kinds.
  if (schema === null) return kinds[0]!;
  const kind = kinds.find((k) => k.schema === schema);
  if (kind) return kind;
  throw new DraincheckError(
    'DC_INPUT_FILE',
    `${name} is not a ${kinds.map((k) => k.schema).join(' or ')} document: schema: unknown kind ${quote(truncateText(schema, 80))}`,
  );
}
