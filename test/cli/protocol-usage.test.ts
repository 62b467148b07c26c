// --protocol where it is not taken yet: one DC_USAGE line and exit 2, nothing started (the
// real CLI as a process, its whole output read).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/lab-process.js';

const ORDERS = fileURLToPath(new URL('../../../test/fixtures/protos/orders.proto', import.meta.url));
// A .proto that does not parse: protobufjs names the file and the line, in one line.
const protoDir = mkdtempSync(join(tmpdir(), 'draincheck-proto-'));
after(() => rmSync(protoDir, { recursive: true, force: true }));
const BROKEN = join(protoDir, 'broken.proto');
writeFileSync(BROKEN, 'syntax = "proto3";\npackage shop.v1;\nmessage Broken {\n  string id = ;\n}\n');
// Within --grpc-proto's own bound (1 MiB), beyond the client Pod's (96 KiB of definitions).
const BIG = join(protoDir, 'big.proto');
writeFileSync(
  BIG,
  [
    'syntax = "proto3";',
    'package big;',
    'message Big {',
    ...Array.from({ length: 4000 }, (_, i) => `  string field_number_${i} = ${i + 1};`),
    '}',
    'service Work { rpc Do(Big) returns (Big); }',
    '',
  ].join('\n'),
);
// An import that is not in the file's folder (imports come from there, on a cluster as here).
const IMPORTS_MISSING = join(protoDir, 'missing-import.proto');
writeFileSync(IMPORTS_MISSING, 'syntax = "proto3";\npackage shop.v1;\nimport "money.proto";\n');
// A Pod file for --platform kube: the refusals come before any cluster is asked.
const POD = join(protoDir, 'pod.yaml');
writeFileSync(
  POD,
  'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: example.com/web:1\n    ports: [{containerPort: 8080}]\n',
);
const OWN_GRPC = ['run', '--protocol', 'grpc', '--server-command', 'node server.js'];

for (const [args, pattern] of [
  [
    ['rollout', '--protocol', 'grpc', '--new-connections'],
    /^draincheck: --new-connections is for HTTP\/1\.1's keep-alive pool: with --protocol grpc every request is an RPC on --connections grpc-js channels/,
  ],
  [
    ['run', '--protocol', 'h2c', '--max-connection-age-ms', '1000'],
    /^draincheck: --max-connection-age-ms is for --protocol grpc \(grpc-js's server option\), not h2c/,
  ],
  [
    ['server', '--max-connection-age-grace-ms', '100'],
    /^draincheck: --max-connection-age-ms \/ --max-connection-age-grace-ms are grpc-js's server options: give --protocol grpc \(got http1\)/,
  ],
  [
    ['lab', '--matrix', '--protocol', 'grpc'],
    /^draincheck: `draincheck lab --matrix` does not take --protocol grpc: each scenario speaks its own protocol/,
  ],
  [
    ['run', '--protocol', 'grpc', '--server-command', 'node server.js'],
    /^draincheck: --protocol grpc works with draincheck's own lab server only, unless `draincheck run` describes your service with --grpc-method, --grpc-proto and --grpc-request/,
  ],
  [
    ['run', '--protocol', 'h2c', '--server-command', 'node server.js'],
    /^draincheck: --protocol h2c works with draincheck's own lab server only, unless `draincheck run` describes your service with --work/,
  ],
  [
    ['run', '--protocol', 'grpc', '--server-command', 'node server.js', '--work', 'GET /slow'],
    /^draincheck: --protocol grpc with your own service needs --grpc-method, --grpc-proto and --grpc-request \(the unary RPC your service takes\), not --work$/,
  ],
  [
    ['run', '--protocol', 'ws', '--server-command', 'node server.js', '--work', 'GET /slow'],
    /^draincheck: --protocol ws with your own service needs --ws-path, --ws-message and --ws-done \(the work message your service takes\), not --work$/,
  ],
  [
    ['run', '--protocol', 'ws', '--server-command', 'node server.js'],
    /^draincheck: --protocol ws works with draincheck's own lab server only, unless `draincheck run` describes your service with --ws-path/,
  ],
  [
    ['run', '--server-command', 'node s.js', '--ws-path', '/jobs', '--ws-message', '{id}'],
    /^draincheck: --ws-path, --ws-message and --ws-done describe a WebSocket service: give --protocol ws \(got http1\)$/,
  ],
  [
    [
      'run',
      '--platform',
      'kube',
      '--protocol',
      'ws',
      '-f',
      POD,
      '--ws-path',
      '/jobs',
      '--ws-message',
      '{job}',
    ],
    /^draincheck: --ws-message: unknown placeholder \{job\}/,
  ],
  [
    [
      'run',
      '--platform',
      'kube',
      '--protocol',
      'grpc',
      '-f',
      POD,
      '--grpc-method',
      'shop.v1.Orders/Cancel',
      '--grpc-proto',
      ORDERS,
    ],
    /^draincheck: --grpc-method shop\.v1\.Orders\/Cancel: shop\.v1\.Orders has no method Cancel \(methods: Place, Watch\)$/,
  ],
  [
    // Within --grpc-proto's 1 MiB, but its definitions are more than a client Pod's environment takes.
    [
      'run',
      '--platform',
      'kube',
      '--protocol',
      'grpc',
      '-f',
      POD,
      '--grpc-method',
      'big.Work/Do',
      '--grpc-proto',
      BIG,
    ],
    /^draincheck: --grpc-proto ".*big\.proto" with --platform kube: its definitions \(imports included\) take \d+ bytes, more than 98304 \(the client Pod gets them in one environment variable\)$/,
  ],
  [
    [
      'run',
      '--platform',
      'kube',
      '--protocol',
      'grpc',
      '-f',
      POD,
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      IMPORTS_MISSING,
    ],
    /^draincheck: --grpc-proto ".*missing-import\.proto" cannot be loaded: .*money\.proto/,
  ],
  [
    // A path the client Pod's own check (draincheck client --target) would refuse: said before
    // any object exists, with the Pod's words.
    ['run', '--platform', 'kube', '-f', POD, '--work', `GET /work/${'a'.repeat(9000)}`],
    /^draincheck: the client Pod would refuse this target: work\.path: .*8192/,
  ],
  [
    ['run', '--protocol', 'ws', '--server-command', 'node s.js', '--ws-path', '/jobs'],
    /^draincheck: --ws-path and --ws-message go together/,
  ],
  [
    ['run', '--protocol', 'ws', '--server-command', 'node s.js', '--ws-path', 'jobs', '--ws-message', 'x'],
    /^draincheck: --ws-path must start with \/, got "jobs"$/,
  ],
  [
    ['run', '--protocol', 'ws', '--server-command', 'node s.js', '--ws-path', '/j', '--ws-message', '{job}'],
    /^draincheck: --ws-message: unknown placeholder \{job\}/,
  ],
  [
    [
      'run',
      '--protocol',
      'ws',
      '--server-command',
      'node s.js',
      '--ws-path',
      '/j',
      '--ws-message',
      'x',
      '--ws-done',
      '(',
    ],
    /^draincheck: --ws-done is not a regular expression: /,
  ],
  [
    ['run', '--server-command', 'node s.js', '--grpc-method', 'shop.v1.Orders/Place', '--grpc-proto', ORDERS],
    /^draincheck: --grpc-method, --grpc-proto and --grpc-request describe a gRPC service: give --protocol grpc \(got http1\)$/,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v1.Orders/Cancel', '--grpc-proto', ORDERS],
    /^draincheck: --grpc-method shop\.v1\.Orders\/Cancel: shop\.v1\.Orders has no method Cancel \(methods: Place, Watch\)$/,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v2.Orders/Place', '--grpc-proto', ORDERS],
    /^draincheck: --grpc-method shop\.v2\.Orders\/Place: no service shop\.v2\.Orders in /,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v1.Orders/Watch', '--grpc-proto', ORDERS],
    /^draincheck: --grpc-method shop\.v1\.Orders\/Watch is a streaming method: the work is one unary call$/,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'Place', '--grpc-proto', ORDERS],
    /^draincheck: --grpc-method must be package\.Service\/Method, e\.g\. shop\.v1\.Orders\/Place, got "Place"$/,
  ],
  [
    [
      ...OWN_GRPC,
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      ORDERS,
      '--grpc-request',
      '{"order_id":"{id}",',
    ],
    /^draincheck: --grpc-request is not JSON once \{ms\} and \{id\} are filled in \(not-json\)/,
  ],
  [
    [
      ...OWN_GRPC,
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      ORDERS,
      '--grpc-request',
      '{"orderId":"{id}"}',
    ],
    /^draincheck: --grpc-request: "orderId" is not a field of PlaceRequest \(fields: order_id, work_ms, items\)$/,
  ],
  [
    [
      ...OWN_GRPC,
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      ORDERS,
      '--grpc-request',
      '[{ms}]',
    ],
    /^draincheck: --grpc-request must be a JSON object \(the request message\), got "\[\{ms\}\]"$/,
  ],
  [
    [
      ...OWN_GRPC,
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      ORDERS,
      '--grpc-request',
      '{"order_id":"{order}"}',
    ],
    /^draincheck: --grpc-request: unknown placeholder \{order\}/,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v1.Orders/Place', '--grpc-proto', '/nonexistent/orders.proto'],
    /^draincheck: --grpc-proto "\/nonexistent\/orders\.proto" cannot be read: ENOENT$/,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v1.Orders/Place', '--grpc-proto', BROKEN],
    /^draincheck: --grpc-proto ".*broken\.proto" cannot be loaded: /,
  ],
  [
    [...OWN_GRPC, '--grpc-method', 'shop.v1.Orders/Place'],
    /^draincheck: --grpc-method and --grpc-proto go together/,
  ],
  [
    ['rollout', '--protocol', 'ws', '--new-connections'],
    /^draincheck: --new-connections is for HTTP\/1\.1's keep-alive pool: with --protocol ws every request is a work message on --connections WebSockets$/,
  ],
  [
    ['rollout', '--protocol', 'ws', '--post-share', '0.5'],
    /^draincheck: --post-share is for HTTP's POST \/work \(http1, h2c\): with --protocol ws every request is a work message, which has no method$/,
  ],
  [
    ['load', '--protocol', 'grpc', '--post-share', '0.25', '--service-url', 'http://127.0.0.1:9'],
    /^draincheck: --post-share is for HTTP's POST \/work \(http1, h2c\): with --protocol grpc every request is a Work RPC, which has no method$/,
  ],
  [
    ['rollout', '--ws-reconnect', 'at-once'],
    /^draincheck: --ws-reconnect is for the WebSocket load \(--protocol ws\), not --protocol http1$/,
  ],
  [
    ['load', '--protocol', 'h2c', '--ws-reconnect', 'at-once', '--service-url', 'http://127.0.0.1:9'],
    /^draincheck: --ws-reconnect is for the WebSocket load \(--protocol ws\), not --protocol h2c$/,
  ],
  [
    ['rollout', '--protocol', 'ws', '--ws-reconnect', 'never'],
    /^draincheck: --ws-reconnect must be backoff or at-once, got "never"$/,
  ],
  [
    ['rollout', '--protocol', 'ws', '--ingress', 'nginx'],
    /^draincheck: --protocol ws with --ingress nginx is not built: draincheck's ingress is not set up to pass WebSocket upgrades to the Pods$/,
  ],
  [
    ['load', '--protocol', 'ws3', '--service-url', 'http://127.0.0.1:9'],
    /^draincheck: --protocol must be http1, h2c, grpc or ws, got "ws3"$/,
  ],
  [
    ['lab', '--matrix', '--protocol', 'ws'],
    /^draincheck: `draincheck lab --matrix` does not take --protocol ws: each scenario speaks its own protocol/,
  ],
  [
    ['server', '--protocol', 'ws', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms \/ DRAIN_IDLE_MS is for HTTP\/1\.1 keep-alive connections: with --protocol ws the drain ends each socket with close 1001$/,
  ],
  [
    ['run', '--protocol', 'grpc', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms is for HTTP\/1\.1 keep-alive/,
  ],
  [
    ['server', '--protocol', 'grpc', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms \/ DRAIN_IDLE_MS is for HTTP\/1\.1/,
  ],
] as const) {
  test(`draincheck ${args.join(' ')}: one DC_USAGE line, exit 2`, async (t) => {
    const r = await runCli(t, [...args], { timeoutMs: 30_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, pattern);
  });
}
