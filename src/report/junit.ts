// JUnit XML for CI (`--junit FILE` on `rollout` and `lab`): the Ant/JUnitReport format that
// Jenkins' JUnit plugin, GitLab's test reports and GitHub's test-report actions read —
// testsuites / testsuite / testcase with failure, error or skipped — written to the strict
// schema (test/fixtures/junit/JUnit.xsd, windyroad's): every required attribute, a
// `properties`, `system-out` and `system-err` per suite, a timestamp without zone. A testcase
// carries no output of its own in that schema, so each case's evidence goes in its failure,
// error or skipped text, and the passed cases' in the suite's system-out.
// Everything in it comes from documents, so from Pods and clusters: untrusted. It is escaped
// here for XML 1.0, the characters XML cannot carry at all (most C0 controls, lone surrogates,
// U+FFFE/U+FFFF) written as visible \uXXXX, and each text bounded.
import { hostname } from 'node:os';

export type JUnitResult =
  | { kind: 'passed'; output: string }
  | { kind: 'failure'; type: string; message: string; text: string }
  | { kind: 'error'; type: string; message: string; text: string }
  | { kind: 'skipped'; message: string };

export interface JUnitCase {
  name: string;
  classname: string;
  /** Seconds. */
  timeS: number;
  result: JUnitResult;
}

export interface JUnitSuite {
  name: string;
  /** ISO 8601 (its zone is dropped: the schema wants none; documents' times are UTC). */
  timestamp: string;
  timeS: number;
  properties: Record<string, string>;
  cases: JUnitCase[];
}

/** Bounds: a message is one line for a CI summary, a text the evidence behind it. */
const MESSAGE_MAX = 2000;
const TEXT_MAX = 64_000;

const bounded = (s: string, max: number): string =>
  s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters cut)`;

/** Characters XML 1.0 cannot carry (XML 1.0 §2.2 Char), shown as \uXXXX instead. */
const notXml =
  // eslint-disable-next-line no-control-regex -- the control characters are what it matches
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const visible = (s: string): string =>
  s.replace(notXml, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Element text. */
export function xmlText(value: string): string {
  return visible(value).replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** A double-quoted attribute value: also quotes, and tab / newline / CR kept as references. */
export function xmlAttr(value: string): string {
  return xmlText(value).replace(/["'\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A token attribute (name, classname): whitespace collapsed, never empty. */
const token = (value: string, fallback: string): string => {
  const t = value.replace(/\s+/g, ' ').trim().slice(0, 256);
  return t === '' ? fallback : t;
};

const seconds = (s: number): string => (Number.isFinite(s) && s > 0 ? s.toFixed(3) : '0');

/** `2026-12-04T17:04:52` from an ISO time (the epoch if it is not one). */
function timestamp(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})/.exec(iso);
  return m ? m[1]! : '1970-01-01T00:00:00';
}

function renderCase(c: JUnitCase): string {
  const head = `<testcase name="${xmlAttr(token(c.name, 'unnamed'))}" classname="${xmlAttr(token(c.classname, 'draincheck'))}" time="${seconds(c.timeS)}"`;
  const r = c.result;
  switch (r.kind) {
    case 'passed':
      return `${head}/>`;
    case 'skipped':
      return `${head}><skipped message="${xmlAttr(bounded(r.message, MESSAGE_MAX))}"/></testcase>`;
    case 'failure':
    case 'error':
      return (
        `${head}><${r.kind} message="${xmlAttr(bounded(r.message, MESSAGE_MAX))}" type="${xmlAttr(r.type)}">` +
        `${xmlText(bounded(r.text, TEXT_MAX))}</${r.kind}></testcase>`
      );
  }
}

export function renderJUnit(suites: readonly JUnitSuite[], host = hostname()): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites>'];
  for (const [id, s] of suites.entries()) {
    const count = (kind: JUnitResult['kind']) => s.cases.filter((c) => c.result.kind === kind).length;
    const out = s.cases
      .filter((c) => c.result.kind === 'passed')
      .map((c) => `${c.name}: ${(c.result as { output: string }).output}`)
      .join('\n');
    lines.push(
      `  <testsuite name="${xmlAttr(token(s.name, 'draincheck'))}" package="${xmlAttr(token(s.name, 'draincheck'))}" id="${id}" ` +
        `timestamp="${timestamp(s.timestamp)}" hostname="${xmlAttr(token(host, 'localhost'))}" tests="${s.cases.length}" ` +
        `failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}" time="${seconds(s.timeS)}">`,
      `    <properties>${Object.entries(s.properties)
        .map(
          ([k, v]) =>
            `<property name="${xmlAttr(token(k, 'property'))}" value="${xmlAttr(bounded(v, MESSAGE_MAX))}"/>`,
        )
        .join('')}</properties>`,
      ...s.cases.map((c) => `    ${renderCase(c)}`),
      `    <system-out>${xmlText(bounded(out, TEXT_MAX))}</system-out>`,
      `    <system-err></system-err>`,
      `  </testsuite>`,
    );
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
