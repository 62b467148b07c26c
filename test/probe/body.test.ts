// What is read and kept of a response body: bounded in memory, depth and size, the raw text
// kept cut with a note, and a run document that can always be written.
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { test } from 'node:test';
import { bodyLimits, readBody } from '../../src/probe/body.js';
import { exchange } from '../../src/probe/http-exchange.js';
import { classifyWork } from '../../src/probe/outcome.js';

const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

test('a small JSON body is kept as parsed JSON, without a note', () => {
  const read = readBody('{"status":"done","id":"w","uid":"u"}');
  assert.deepEqual(read.kept, { status: 'done', id: 'w', uid: 'u' });
  assert.equal(read.note, null);
  assert.equal(read.unreadable, null);
  assert.deepEqual(readBody('plain text').kept, 'plain text');
});

test('a body nested deeper than the limit is kept as text, cut, with a note; it is never parsed', () => {
  const text = deep(6000);
  const read = readBody(text);
  assert.equal(typeof read.kept, 'string');
  assert.ok((read.kept as string).startsWith('{"a":{"a":'));
  assert.ok((read.kept as string).length < bodyLimits.keepChars + 100);
  assert.match(read.note ?? '', /nested deeper than 32 levels: kept as text, the first 16384 characters/);
  assert.match(read.unreadable ?? '', /nested deeper/);
  // Whatever is kept can be written: the crash this bounds was JSON.stringify's RangeError.
  assert.doesNotThrow(() => JSON.stringify({ body: read.kept }));
  // Exactly at the limit it is still JSON.
  assert.equal(typeof readBody(deep(bodyLimits.maxDepth)).kept, 'object');
  assert.equal(typeof readBody(deep(bodyLimits.maxDepth + 1)).kept, 'string');
  // Brackets inside strings are not nesting.
  assert.equal(readBody(JSON.stringify({ s: '['.repeat(100) })).note, null);
});

test('a long completion body is still recognised, but the document keeps only its start', () => {
  const body = JSON.stringify({ status: 'done', id: 'w', uid: 'u', pad: 'x'.repeat(100_000) });
  const outcome = classifyWork(
    {
      connected: true,
      dnsFailed: false,
      localPort: 1,
      status: 200,
      headers: {},
      body,
      bytesReceived: body.length,
      responseComplete: true,
      error: null,
      timedOut: null,
    },
    'w',
  );
  assert.equal(outcome.outcome, 'completed');
  assert.equal(outcome.bodyUid, 'u');
  assert.equal(typeof outcome.body, 'string');
  assert.match(outcome.body as string, /more characters cut\]$/);
  assert.match(outcome.bodyNote ?? '', /^the body is 100\d+ characters long: kept as text/);
});

test('a deep 2xx body is an unexpected response that says why', () => {
  const text = deep(6000);
  const outcome = classifyWork(
    {
      connected: true,
      dnsFailed: false,
      localPort: 1,
      status: 200,
      headers: {},
      body: text,
      bytesReceived: text.length,
      responseComplete: true,
      error: null,
      timedOut: null,
    },
    'w',
  );
  assert.equal(outcome.outcome, 'unexpected-response');
  assert.match(
    outcome.problem ?? '',
    /cannot be read as a completion body: the body is nested deeper than 32/,
  );
  assert.match(outcome.bodyNote ?? '', /nested deeper/);
});

test('the client holds at most readBytes of a body in memory and counts the rest', async (t) => {
  const size = bodyLimits.readBytes + 500_000;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(Buffer.alloc(size, 0x78));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address() as { port: number };
  const result = await exchange(new URL(`http://127.0.0.1:${port}/work`), {
    connectTimeoutMs: 5000,
    responseTimeoutMs: 10_000,
  });
  assert.equal(result.responseComplete, true);
  assert.equal(result.bytesReceived, size);
  assert.equal(result.body?.length, bodyLimits.readBytes);
  assert.equal(result.bodyBytesDropped, 500_000);
  const outcome = classifyWork(result, 'w');
  assert.equal(outcome.outcome, 'unexpected-response');
  assert.match(
    outcome.bodyNote ?? '',
    /larger than 1048576 bytes \(500000 more were received and not read\)/,
  );
  assert.ok((outcome.body as string).length < bodyLimits.keepChars + 100);
});
