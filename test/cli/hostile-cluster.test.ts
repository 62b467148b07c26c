// What a cluster sends back (object names, here from a hostile API server) reaches no terminal
// raw: `draincheck cleanup` prints names with their control characters as visible escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeApiServer, serveNamespaceList } from '../helpers/fake-apiserver/server.js';
import { startCli } from '../helpers/cli.js';

test('cleanup --dry-run prints a namespace name full of control sequences as visible escapes', async (t) => {
  const hostile = 'draincheck-a1\u001b]0;pwned\u0007\r\nverdict: accepted-request-finished\u009b2J';
  const server = new FakeApiServer();
  serveNamespaceList(server, [{ metadata: { name: hostile } }]);
  await server.start();
  t.after(() => server.stop());
  const run = startCli(['cleanup', '--kubeconfig', server.writeKubeconfig(), '--dry-run']);
  t.after(() => run.kill());
  assert.equal(await run.exited, 0, run.stderr());
  assert.equal(
    run.stdout(),
    'would delete namespace/draincheck-a1\\x1b]0;pwned\\x07\\r\\nverdict: accepted-request-finished\\x9b2J\n',
  );
});
