// deploy/Containerfile and the package's bins, checked where no image can be built here:
// the entrypoint is the CLI the package ships, run directly as PID 1 (no init, on purpose);
// two stages, production dependencies only at run time; every file it copies exists and is
// not excluded from the build context; both bins exist and start with a shebang.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

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
