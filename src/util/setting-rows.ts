// A command's settings as rows: one row per setting says its flag, its default, how its text is
// read (a zod schema: the one validator style) and written back, and where its value goes (the
// document, the load Pod's command line, the report). Commands derive their flags, their
// validation and their `--help` from the rows, so a default is written once and a new setting is
// one row. The tables: src/probe/load/settings.ts (the load's, shared by `draincheck load`) and
// src/kinds/rollout/settings.ts (the rollout's, which extend them).
import type { z } from 'zod';
import { DraincheckError } from '../errors.js';

/** Where a setting is kept in a document: its section (`load`, `deployment`) and its field's schema. */
export interface DocumentField<T, D, S extends string = string> {
  section: S;
  /** The field's schema in the document (its description is the row's help). */
  schema: z.ZodType<D>;
  /** The value as the document keeps it (default: as is). */
  value: (v: T) => D;
}

export interface SettingRow<T, D = unknown, S extends string = string> {
  /** `--rate`: the long flag; commander's attribute (`rate`) is the row's name. */
  flag: `--${string}`;
  /** The flag's argument in `--help` (`<n>`); '' for a switch without one. */
  arg: string;
  /** What it means, with its unit and range: `--help` says it, followed by the default. */
  help: string;
  /** The default, as a value (written here only). */
  default: T;
  /** Said after the default in `--help` (what the default means). */
  defaultNote?: string;
  /**
   * The flag's text (or, for a repeatable flag, the list of its texts) to the value; an issue's
   * message is the one line the user sees (DC_USAGE, exit 2).
   */
  schema: z.ZodType<T>;
  /** The value as the flag's text (the default in `--help`; the load Pod's argument). */
  text: (v: T) => string;
  /** `--flag A --flag B`: every value kept, in order. */
  repeatable?: true;
  /**
   * A switch that gives the setting a fixed value instead (`--new-connections`): giving both the
   * flag and the switch is DC_USAGE.
   */
  alternative?: { flag: `--${string}`; help: string; value: T };
  /** An example of a valid non-default text (the row test sends it through every place). */
  sample: string;
  /** A text the schema refuses (the row test checks its one line); none for a switch. */
  badSample?: string;
  /** Where the document keeps it; null: not in the document. */
  document: DocumentField<T, D, S> | null;
  /**
   * How the report says it, from the document's value and its section's other values (a setting
   * that means nothing without another — the retry's attempts without a retry policy — says '':
   * not said); the renderer escapes it. null: never said.
   */
  fact: ((v: D, section: Readonly<Record<string, unknown>>) => string) | null;
}

/** One row, its types inferred (the value, the document's value, the document's section). */
export function setting<T, D = T, S extends string = string>(row: SettingRow<T, D, S>): SettingRow<T, D, S> {
  return row;
}

/** A table of rows by name (commander's attribute of the flag). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SettingTable = Record<string, SettingRow<any, any, string>>;

/** The values a table's rows resolve to. */
export type SettingValues<R extends SettingTable> = {
  [K in keyof R]: R[K] extends SettingRow<infer T, infer _D, infer _S> ? T : never;
};

/** commander's attribute for a flag: `--new-connections` → `newConnections`. */
export function flagAttribute(flag: string): string {
  return flag.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}

/** `--help`'s line for a row: its meaning, then the default as the flag would take it. */
export function settingHelp<T>(row: SettingRow<T>): string {
  if (row.repeatable || row.arg === '') return row.help;
  const shown = row.text(row.default);
  if (shown === '') return `${row.help} (default: ${row.defaultNote ?? 'none'})`;
  const note = row.defaultNote ? `: ${row.defaultNote}` : '';
  return `${row.help} (default ${shown}${note})`;
}

/** Every value of a table from commander's options (a flag not given: its row's default). */
export function readSettings<R extends SettingTable>(
  rows: R,
  options: Record<string, unknown>,
): SettingValues<R> {
  const out: Record<string, unknown> = {};
  for (const [name, row] of Object.entries(rows)) out[name] = readSetting(row, options);
  return out as SettingValues<R>;
}

/** One row's value from commander's options; DC_USAGE with the row's message when it is bad. */
export function readSetting<T>(row: SettingRow<T>, options: Record<string, unknown>): T {
  const raw = options[flagAttribute(row.flag)];
  const alternative = row.alternative;
  if (alternative && options[flagAttribute(alternative.flag)] === true) {
    if (raw !== undefined)
      throw new DraincheckError(
        'DC_USAGE',
        `${row.flag} and ${alternative.flag} ask for two things: give one`,
      );
    return alternative.value;
  }
  if (raw === undefined) return row.default;
  const parsed = row.schema.safeParse(raw);
  if (!parsed.success)
    throw new DraincheckError('DC_USAGE', parsed.error.issues[0]?.message ?? `${row.flag}: bad value`);
  return parsed.data;
}

/** A value as command-line arguments: `--rate 200`, or the alternative's switch. */
export function settingArgv<T>(row: SettingRow<T>, value: T): string[] {
  if (row.alternative && value === row.alternative.value) return [row.alternative.flag];
  // A switch: given when on, absent when at its default.
  if (row.arg === '') return value === row.default ? [] : [row.flag];
  return [row.flag, row.text(value)];
}

/** The fields a table's rows keep in one section of a document, from their values. */
export function documentFields<R extends SettingTable>(
  rows: R,
  section: string,
  values: Partial<SettingValues<R>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, row] of Object.entries(rows))
    if (row.document?.section === section) out[name] = row.document.value(values[name]);
  return out;
}

/** The schemas of a section's fields, each described by its row's help. */
export type DocumentShape<R extends SettingTable, S extends string> = {
  [K in keyof R as NonNullable<R[K]['document']> extends { section: S } ? K : never]: R[K] extends SettingRow<
    infer _T,
    infer D,
    infer _S
  >
    ? z.ZodType<D>
    : never;
};

export function documentShape<R extends SettingTable, S extends string>(
  rows: R,
  section: S,
): DocumentShape<R, S> {
  const out: Record<string, z.ZodType> = {};
  for (const [name, row] of Object.entries(rows))
    if (row.document?.section === section) out[name] = row.document.schema.describe(row.help);
  return out as DocumentShape<R, S>;
}
