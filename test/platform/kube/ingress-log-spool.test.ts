// The cluster nginx's log as the runner reads it (src/platform/kube/ingress-nginx.ts
// IngressLogSpool): the access log (stdout) and the error log (stderr) interleaved in one Pod
// log, joined with the embedded runtime's parsing — an error line explains its request's failed
// attempt and is not counted as unparsed, a garbled line is, and no attempt names a Pod (the
// upstream is the Service's ClusterIP).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IngressLogSpool } from '../../../src/platform/kube/ingress-nginx.js';

const CLUSTER_IP = '10.96.0.12:80';

test('IngressLogSpool: one interleaved stream joined as two logs; an error line is its own, garbage is unparsed', async () => {
  const spool = new IngressLogSpool();
  try {
    const origin = 1_796_537_000_000;
    const lines = [
      `dc1\t1796537001.000\texit-1\t200\t0.020\t${CLUSTER_IP}\t200\t0.001\t0.019\t0.019`,
      `2026/12/06 06:19:59 [error] 29#29: *3 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.7, server: , request: "GET /work?ms=20&id=exit-2 HTTP/1.1", upstream: "http://${CLUSTER_IP}/work?ms=20&id=exit-2", host: "10.96.0.40"`,
      `dc1\t1796537002.000\texit-2\t502\t0.001\t${CLUSTER_IP}\t502\t-\t-\t0.001`,
      'not a line of nginx \u0007',
      // A readiness GET (no id): not one of the load's requests.
      `dc1\t1796537003.000\t-\t200\t0.000\t-\t-\t-\t-\t-`,
    ];
    for (const l of lines) await spool.add(l);
    const e = await spool.evidence(origin);
    assert.equal(e.requests, 2);
    assert.deepEqual(e.statuses, { '200': 1, '502': 1 });
    assert.equal(e.unparsed, 1, 'the garbage line, not the error line');
    assert.deepEqual(e.attemptFailures, { refused: 1 });
    const failed = e.notPlain.find((r) => r.id === 'exit-2');
    assert.deepEqual(failed?.attempts, [{ addr: CLUSTER_IP, podUid: null, status: 502, cause: 'refused' }]);
  } finally {
    spool.dispose();
  }
});
