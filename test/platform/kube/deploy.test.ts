// deploy/Containerfile and the package's bins, checked where no image can be built here:
// the entrypoint is the CLI the package ships, run directly as PID 1 (no init, on purpose);
// two stages, production dependencies only at run time; every file it copies exists and is
// not excluded from the build context; both bins exist and start with a shebang; the runtime
// stage's files, laid out as its COPY lines lay them out, load the gRPC contract from proto/
// (`--protocol grpc` reads the .proto files at run time: an image without them cannot serve it).
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as GrpcContract from '../../../src/probe/grpc-contract.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const containerfile = readFileSync(`${root}deploy/Containerfile`, 'utf8');
const instructions = containerfile.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { bin: Record<string, string> };

test('Containerfile: the CLI as PID 1, no init, with a comment that says why', () => {
  const entrypoint = instructions.find((l) => l.startsWith('ENTRYPOINT'));
  assert.equal(entrypoint, `ENTRYPOINT ["node", "/app/${pkg.bin.draincheck}"]`);
  assert.ok(!/tini|dumb-init/.test(instructions.join('\n')), 'no init process');
  assert.match(containerfile, /# Node runs directly as PID 1/);
  assert.match(containerfile, /137/);
});

test('Containerfile: build stage with dev dependencies, runtime stage with production ones', () => {
  const froms = instructions.filter((l) => l.startsWith('FROM'));
  assert.equal(froms.length, 2);
  assert.match(instructions.join('\n'), /RUN npm ci --no-audit --no-fund\n[\s\S]*RUN npm run build/);
  assert.match(instructions.join('\n'), /RUN npm ci --omit=dev/);
  assert.ok(
    !/--mount=|<</.test(instructions.join('\n')),
    'plain syntax for docker, podman, buildah, nerdctl',
  );
});

test('Containerfile: what it copies exists and is in the build context', () => {
  const ignored = readFileSync(`${root}.dockerignore`, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const copies = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
  assert.ok(copies.length >= 3);
  for (const copy of copies) {
    const sources = copy.split(/\s+/).slice(1, -1);
    for (const source of sources) {
      assert.ok(existsSync(`${root}${source}`), `${source} exists`);
      assert.ok(!ignored.includes(source.split('/')[0] ?? ''), `${source} is not in .dockerignore`);
    }
  }
});

test('package bins: draincheck and kubectl-draincheck exist and start with a shebang', () => {
  assert.deepEqual(Object.keys(pkg.bin).sort(), ['draincheck', 'kubectl-draincheck']);
  for (const file of Object.values(pkg.bin)) {
    const compiled = `${root}${file}`;
    assert.ok(existsSync(compiled), `${file} built`);
    assert.match(readFileSync(compiled, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  }
});

test('Containerfile: the runtime stage ships proto/ where the compiled gRPC contract reads it; the package files list does too', async (t) => {
  // The runtime stage: the instructions after its FROM, each COPY with its destination under WORKDIR.
  const lastFrom = instructions.map((l) => l.startsWith('FROM')).lastIndexOf(true);
  const buildWorkdir = instructions
    .slice(0, lastFrom)
    .filter((l) => l.startsWith('WORKDIR '))
    .map((l) => l.split(/\s+/)[1]!)
    .pop();
  const image = mkdtempSync(path.join(tmpdir(), 'draincheck-image-'));
  t.after(() => rmSync(image, { recursive: true, force: true }));
  let workdir = '/';
  const copied: string[] = [];
  for (const line of instructions.slice(lastFrom + 1)) {
    if (line.startsWith('WORKDIR ')) workdir = line.split(/\s+/)[1]!;
    if (!line.startsWith('COPY ')) continue;
    const words = line.split(/\s+/).slice(1);
    const fromBuild = words[0]?.startsWith('--from=');
    const parts = fromBuild ? words.slice(1) : words;
    const destination = path.posix.resolve(workdir, parts[parts.length - 1]!);
    for (const source of parts.slice(0, -1)) {
      // The build stage builds in its WORKDIR from this repository (its own `npm run build`, the
      // dist/ this test run built); anything else comes from the build context, this repository.
      const local = fromBuild ? path.posix.relative(buildWorkdir ?? '/', source) : source;
      assert.ok(!local.startsWith('..'), `${source} is in the build stage's WORKDIR`);
      const target =
        parts.length > 2 || destination.endsWith('/')
          ? path.posix.join(destination, path.posix.basename(source))
          : destination;
      mkdirSync(path.dirname(path.join(image, target)), { recursive: true });
      cpSync(path.join(root, local), path.join(image, target), { recursive: true });
      copied.push(target);
    }
  }
  assert.ok(
    copied.includes('/app/proto'),
    `the runtime stage copies proto/ to /app/proto: ${copied.join(', ')}`,
  );
  // `npm ci --omit=dev` in the image: the production dependencies, here this checkout's.
  symlinkSync(path.join(root, 'node_modules'), path.join(image, 'app', 'node_modules'), 'dir');
  const entry = path.join(image, 'app', 'dist', 'src', 'probe', 'grpc-contract.js');
  assert.ok(existsSync(entry), 'the compiled contract is in the image');
  const contract = (await import(pathToFileURL(entry).href)) as typeof GrpcContract;
  assert.equal(
    contract.PROTO_DIR,
    `${path.join(image, 'app', 'proto')}${path.sep}`,
    'read from the image’s own proto/',
  );
  const loaded = contract.labContract();
  assert.ok(loaded.lab.Work, 'draincheck.lab.v1.Lab/Work');
  assert.ok(loaded.health.Check, 'grpc.health.v1.Health/Check');
  // `npm install -g .` / `npm pack`: the package's files list carries proto/ too.
  const files = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { files: string[] }).files;
  assert.ok(files.includes('proto'), `package.json files: ${files.join(', ')}`);
});
