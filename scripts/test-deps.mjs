#!/usr/bin/env node
// Before `npm test` (its `pretest`): the system packages the tests use. As root with apt-get
// and something missing, installs what is missing; otherwise names exactly what to install
// and fails. Silent, and quick, when everything is there — so it can run before every test.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findChromium } from './find-chromium.mjs';

const onPath = (command, env) =>
  (env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // Not in this directory.
      return false;
    }
  });

/** The Debian packages the tests use, and how to tell each is there. */
export const requirements = [
  {
    pkg: 'chromium',
    why: "the HTML report's browser tests",
    present: (env) => Boolean(findChromium(env).path),
  },
  {
    pkg: 'util-linux',
    why: "unshare, setpriv: the embedded runtime's PID 1 containers",
    present: (env) => onPath('unshare', env) && onPath('setpriv', env),
  },
  { pkg: 'procps', why: 'ps', present: (env) => onPath('ps', env) },
  { pkg: 'iproute2', why: 'ip', present: (env) => onPath('ip', env) },
  { pkg: 'nftables', why: 'nft: Services as kernel NAT rules', present: (env) => onPath('nft', env) },
  {
    pkg: 'nginx-light',
    why: 'nginx: the L7 proxy of the behind-a-proxy scenario and rollout --ingress nginx',
    present: (env) => onPath('nginx', env),
  },
  {
    pkg: 'haproxy',
    why: 'haproxy: rollout --ingress haproxy',
    present: (env) => onPath('haproxy', env),
  },
  {
    pkg: 'libxml2-utils',
    why: 'xmllint: --junit output validated against the JUnit XSD',
    present: (env) => onPath('xmllint', env),
  },
];

export function missingPackages(env = process.env) {
  return requirements.filter((r) => !r.present(env)).map((r) => r.pkg);
}

/** What to do about `missing`: nothing, install (root with apt-get), or say what to install. */
export function plan(missing, { root, aptGet }) {
  if (missing.length === 0) return { action: 'none' };
  const install = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (root && aptGet) return { action: 'install', packages: missing };
  return {
    action: 'tell',
    message:
      `the tests need these packages: ${missing.join(' ')}. Install them, then run npm test again: ` +
      (aptGet ? `sudo apt-get update && sudo ${install}` : `(Debian/Ubuntu: apt-get update && ${install})`) +
      (missing.includes('chromium') ? ' — or set CHROME_PATH to a Chrome/Chromium binary' : ''),
  };
}

function main() {
  const missing = missingPackages();
  const step = plan(missing, {
    root: process.getuid?.() === 0,
    aptGet: onPath('apt-get', process.env),
  });
  if (step.action === 'none') return 0;
  if (step.action === 'tell') {
    console.error(`test-deps: ${step.message}`);
    return 1;
  }
  console.error(`test-deps: installing ${step.packages.join(' ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...step.packages],
  ]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) {
      console.error(`test-deps: apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
      return 1;
    }
  }
  const still = missingPackages();
  if (still.length > 0) {
    console.error(`test-deps: still missing after apt-get: ${still.join(' ')}`);
    return 1;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
