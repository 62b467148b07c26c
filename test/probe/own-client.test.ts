// The client side for the user's own service, against a real loopback server: the health
// path (2xx), the work request as the template says (method, path, headers, body with {ms} and
// {id}), the whole request written, no /state poll, and the UID read where --uid-from says.
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { test } from 'node:test';
import { runClient } from '../../src/probe/client.js';
import type { ClientEvent } from '../../src/probe/client-events.js';
import { resolveTarget } from '../../src/workload/target.js';

test('a POST work request from the template, its UID from a header, and no /state poll', async (t) => {
  const seen: Array<{ method: string; url: string; header: string | undefined; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        header: req.headers['x-req'] as string,
        body,
      });
      if (req.url === '/ready') {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(201, { 'x-pod': 'pod-uid-1' });
        res.end('made');
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address() as { port: number };
  const target = resolveTarget({
    healthPath: '/ready',
    work: 'POST /orders?wait={ms}',
    header: ['X-Req: {id}'],
    body: '{"id":"{id}","ms":{ms}}',
    expectStatus: '201',
    uidFrom: 'header:X-Pod',
  })!;
  const events: ClientEvent[] = [];
  const start = performance.now();
  await runClient(
    {
      serviceUrl: `http://127.0.0.1:${port}`,
      workId: 'w-1',
      workMs: 7,
      serviceReadyTimeoutMs: 2000,
      acceptanceTimeoutMs: 2000,
      connectTimeoutMs: 2000,
      responseTimeoutMs: 2000,
      pollIntervalMs: 10,
      target,
    },
    {
      now: () => performance.now() - start,
      emit: (e) => events.push(e),
      signal: AbortSignal.timeout(10_000),
    },
  );
  assert.deepEqual(
    seen.map((s) => s.url),
    ['/ready', '/orders?wait=7'],
    'health, then the work request; /state is never asked',
  );
  assert.deepEqual(seen[1], {
    method: 'POST',
    url: '/orders?wait=7',
    header: 'w-1',
    body: '{"id":"w-1","ms":7}',
  });
  const types = events.map((e) => e.type);
  assert.ok(types.includes('service-ready'));
  const written = events.find((e) => e.type === 'work-written');
  assert.ok(written && (written.data.bytes as number) > 0, 'the whole request written');
  const outcome = events.find((e) => e.type === 'work-outcome');
  assert.equal(outcome?.data.outcome, 'completed');
  assert.equal(outcome?.data.bodyUid, 'pod-uid-1');
});
