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

test('terminalSafeJson escapes what JSON.stringify leaves raw, and the JSON means the same', () => {
  const value = { s: 'a\u009b[2Jb\u007f\u0085', t: '\u001b' };
  const json = terminalSafeJson(JSON.stringify(value));
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.doesNotMatch(json, /[\u0000-\u001f\u007f-\u009f]/);
  assert.deepEqual(JSON.parse(json), value);
});
