// Control characters from outside never reach a terminal raw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { terminalSafe, terminalSafeJson } from '../../src/util/terminal-text.js';

test('terminalSafe turns every C0 and C1 control character (and DEL) into a visible escape', () => {
  assert.equal(
    terminalSafe('\u001b]0;pwned\u0007\u001b[1A\r\nverdict: x\t\u009b2J\u007f'),
    '\\x1b]0;pwned\\x07\\x1b[1A\\r\\nverdict: x\\t\\x9b2J\\x7f',
  );
  for (let c = 0; c < 0xa0; c += 1) {
    const out = terminalSafe(String.fromCharCode(c));
    if (c >= 0x20 && c < 0x7f) assert.equal(out, String.fromCharCode(c));
    else assert.match(out, /^\\(x[0-9a-f]{2}|[nrt])$/, `U+${c.toString(16)}`);
  }
  assert.equal(terminalSafe('plain é ✓ 日本'), 'plain é ✓ 日本');
});

test('terminalSafe escapes bidi controls, other format characters and line separators', () => {
  // U+202E turns `fate: finished` into text shown right to left; U+2028 breaks a line.
  assert.equal(
    terminalSafe('fate: \u202edehsinif\u202c\u2028verdict: rolled\u2029'),
    'fate: \\u202edehsinif\\u202c\\u2028verdict: rolled\\u2029',
  );
  const formatControls = [
    0x061c, 0x200b, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2066, 0x2067, 0x2068,
    0x2069, 0xfeff, 0x2028, 0x2029,
  ];
  for (const code of formatControls) {
    assert.equal(
      terminalSafe(`a${String.fromCodePoint(code)}b`),
      `a\\u${code.toString(16).padStart(4, '0')}b`,
    );
  }
  // A tag character beyond the BMP (invisible text) becomes one escape, not two halves.
  assert.equal(terminalSafe('x\u{e0041}y'), 'x\\u{e0041}y');
  // Right-to-left text itself is content, not a control.
  assert.equal(terminalSafe('שלום مرحبا'), 'שלום مرحبا');
});

test('terminalSafeJson escapes what JSON.stringify leaves raw, and the JSON means the same', () => {
  const value = { s: 'a\u009b[2Jb\u007f\u0085', t: '\u001b', u: '\u202eab\u2028\u{e0041}' };
  const json = terminalSafeJson(JSON.stringify(value));
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.doesNotMatch(json, /[\u0000-\u001f\u007f-\u009f]|[\p{Cf}\p{Zl}\p{Zp}]/u);
  assert.deepEqual(JSON.parse(json), value);
});
