// The README's `npm test` on a fresh machine: the pre-test check finds what the tests need
// (Chromium wherever it is installed, the Debian tools on the PATH), installs what is missing
// as root with apt-get or names exactly what to install, and is silent when nothing is
// missing; .ci/run runs exactly the README's test command.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

interface Found {
  path?: string;
  error?: string;
}
type Plan =
  { action: 'none' } | { action: 'install'; packages: string[] } | { action: 'tell'; message: string };
const root = fileURLToPath(new URL('../../../', import.meta.url));
const { findChromium } = (await import(new URL('scripts/find-chromium.mjs', `file://${root}`).href)) as {
  findChromium: (env: NodeJS.ProcessEnv) => Found;
};
const deps = (await import(new URL('scripts/test-deps.mjs', `file://${root}`).href)) as {
  missingPackages(env: NodeJS.ProcessEnv): string[];
  plan(missing: string[], host: { root: boolean; aptGet: boolean }): Plan;
};

function fakeExecutable(path: string) {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
}

function sandbox(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-deps-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // HOME too: playwright's default cache is under it.
  return { dir, env: { PATH: join(dir, 'bin'), HOME: join(dir, 'home') } };
}

test('Chromium is found through CHROME_PATH, and a CHROME_PATH that names nothing is an error', (t) => {
  const { dir, env } = sandbox(t);
  const chrome = fakeExecutable(join(dir, 'opt', 'chrome'));
  fakeExecutable(join(dir, 'bin', 'chromium'));
  assert.deepEqual(findChromium({ ...env, CHROME_PATH: chrome }), { path: chrome });
  const missing = findChromium({ ...env, CHROME_PATH: join(dir, 'nope') });
  assert.equal(missing.path, undefined);
  assert.match(missing.error!, /CHROME_PATH=.*nope is not an executable file/);
});

for (const command of ['chromium', 'chromium-browser', 'google-chrome']) {
  test(`Chromium is found as ${command} on the PATH`, (t) => {
    const { dir, env } = sandbox(t);
    const path = fakeExecutable(join(dir, 'bin', command));
    assert.deepEqual(findChromium(env), { path });
  });
}

test("Chromium is found in playwright's cache, the newest build first", (t) => {
  const { dir, env } = sandbox(t);
  const cache = join(dir, 'home', '.cache', 'ms-playwright');
  fakeExecutable(join(cache, 'chromium-1100', 'chrome-linux', 'chrome'));
  const newest = fakeExecutable(join(cache, 'chromium-1200', 'chrome-linux64', 'chrome'));
  assert.deepEqual(findChromium(env), { path: newest });
  const elsewhere = join(dir, 'browsers');
  const pinned = fakeExecutable(join(elsewhere, 'chromium-1000', 'chrome-linux', 'chrome'));
  assert.deepEqual(findChromium({ ...env, PLAYWRIGHT_BROWSERS_PATH: elsewhere }), { path: pinned });
});

test('no Chromium anywhere: an error saying where it looked and how to get one', (t) => {
  const { env } = sandbox(t);
  const r = findChromium(env);
  assert.equal(r.path, undefined);
  assert.match(
    r.error!,
    /no Chromium found \(looked at CHROME_PATH, chromium, chromium-browser, google-chrome/,
  );
  assert.match(r.error!, /apt-get install -y chromium/);
  assert.match(r.error!, /CHROME_PATH/);
});

test('missing packages: by the commands and the browser the tests use', (t) => {
  const { dir, env } = sandbox(t);
  assert.deepEqual(deps.missingPackages(env), [
    'chromium',
    'util-linux',
    'procps',
    'iproute2',
    'nftables',
    'nginx-light',
    'haproxy',
    'libxml2-utils',
  ]);
  for (const c of ['unshare', 'setpriv', 'ps', 'ip', 'nft', 'nginx', 'haproxy', 'xmllint', 'google-chrome'])
    fakeExecutable(join(dir, 'bin', c));
  assert.deepEqual(deps.missingPackages(env), []);
});

test('what the check does: nothing, install as root with apt-get, or say exactly what to install', () => {
  assert.deepEqual(deps.plan([], { root: false, aptGet: true }), { action: 'none' });
  assert.deepEqual(deps.plan(['chromium', 'nftables'], { root: true, aptGet: true }), {
    action: 'install',
    packages: ['chromium', 'nftables'],
  });
  const tell = deps.plan(['chromium', 'nftables'], { root: false, aptGet: true });
  assert.equal(tell.action, 'tell');
  assert.match(
    (tell as { message: string }).message,
    /sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium nftables/,
  );
  const noApt = deps.plan(['procps'], { root: true, aptGet: false });
  assert.equal(noApt.action, 'tell');
});

test('on this machine nothing is missing: the check is silent and succeeds', () => {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'test-deps.mjs')], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, '');
});

test("npm test runs the check first, and .ci/run runs exactly the README's test command after npm ci", () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.match(pkg.scripts.pretest!, /^node scripts\/test-deps\.mjs && /);
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const quickStart = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const testCommand = quickStart.split('\n')[1]?.replace(/#.*$/, '').trim();
  assert.equal(testCommand, 'npm test');
  const commands = readFileSync(join(root, '.ci', 'run'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.equal(commands.at(-1), testCommand);
  assert.match(commands.at(-2)!, /^npm ci\b/);
});
