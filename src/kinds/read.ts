// `draincheck report`'s input: documents of any registered kind, each read within the limits
// of untrusted input (src/results/read.ts), its kind taken from its `schema` string, then
// validated by that kind's schema; and their report, each kind rendered by its own renderers.
import { DraincheckError } from '../errors.js';
import { documentFiles, readDocumentValue } from '../results/read.js';
import type { RenderContext, ReportFormat } from './kind.js';
import { experimentKinds, kindOf, type RegisteredKind } from './registry.js';

export interface KindedDocument {
  kind: RegisteredKind;
  /** Valid against kind's documentSchema. */
  doc: unknown;
  file: string;
}

export function readDocuments(paths: string[], kinds = experimentKinds): KindedDocument[] {
  const expected = kinds.map((k) => k.schema).join(' or ');
  return documentFiles(paths).map((file) => {
    const value = readDocumentValue(file, expected);
    const kind = kindOf(value, file, kinds);
    const checked = kind.validate(value);
    if (!checked.ok)
      throw new DraincheckError(
        'DC_INPUT_FILE',
        `${file} is not a ${kind.schema} document: ${checked.problem}`,
      );
    return { kind, doc: checked.doc, file };
  });
}

/**
 * The report of documents in one format: JSON is one array of every document; text is each
 * kind's report in turn (kinds in the order their first document came); HTML is one kind's page.
 */
export async function renderDocuments(
  docs: KindedDocument[],
  format: ReportFormat,
  context: RenderContext,
): Promise<string> {
  if (format === 'json')
    return JSON.stringify(
      docs.map((d) => d.kind.json(d.doc)),
      null,
      2,
    );
  const groups = new Map<RegisteredKind, unknown[]>();
  for (const d of docs) {
    const group = groups.get(d.kind) ?? [];
    group.push(d.doc);
    groups.set(d.kind, group);
  }
  if (format === 'html' && groups.size > 1) {
    throw new DraincheckError(
      'DC_USAGE',
      `one HTML page shows one kind of document; these are ${[...groups.keys()].map((k) => k.schema).join(', ')}: report each kind on its own`,
    );
  }
  const reports = await Promise.all([...groups].map(([kind, group]) => kind.render(format, group, context)));
  return reports.join('\n\n');
}
