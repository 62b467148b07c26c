// The page around any report: one self-contained HTML file with inline style and script and a
// Content-Security-Policy that allows exactly those (by SHA-256), so even a string that escaped
// escaping could neither load nor run anything. Shared by the lab's page (page.ts) and the
// rollout's (src/kinds/rollout/render/html.ts), each adding its own stylesheet to the common one.
import { createHash } from 'node:crypto';
import { esc } from './escape.js';
import { pageScript } from './script.js';
import { pageStyle } from './style.js';

export interface PageShell {
  title: string;
  /** Short facts under the heading (run count, versions, when), escaped here. */
  meta: readonly string[];
  /** The page's <main>, already escaped markup. */
  body: string;
  /** Extra CSS after the common stylesheet (our own constant, never document text). */
  style?: string;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export function renderShell({ title, meta, body, style = '' }: PageShell): string {
  const css = style ? `${pageStyle}\n${style.trim()}` : pageStyle;
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(css)}`,
    `script-src ${sha256(pageScript)}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    // Our own constant (keywords and base64 hashes): written as it is, readable in the file.
    `<meta http-equiv="Content-Security-Policy" content="${csp}">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="color-scheme" content="light dark">` +
    `<title>${esc(title)}</title><style>${css}</style></head>` +
    `<body><header><h1>${esc(title)}</h1><p class="meta">${meta.map(esc).join(' · ')}</p></header>` +
    `<main>${body}</main>` +
    `<div id="tip" role="tooltip" hidden><div class="tip-head"></div><pre></pre></div>` +
    `<script>${pageScript}</script></body></html>\n`
  );
}
