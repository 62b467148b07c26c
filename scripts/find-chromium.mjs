// Where a Chromium the HTML report's browser tests can drive is, wherever it was installed:
// CHROME_PATH, then chromium / chromium-browser / google-chrome on the PATH (Debian's
// /usr/bin/chromium among them), then playwright's own download cache. Plain JavaScript, so
// that the pre-test check (scripts/test-deps.mjs) can use it before anything is compiled.
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const chromiumCommands = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** How to get one, for messages: exact commands. */
export const chromiumHint =
  'Debian/Ubuntu: apt-get install -y chromium (npm test does it when run as root); ' +
  'or set CHROME_PATH to a Chrome/Chromium binary; or npx playwright-core install chromium';

function executable(path) {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // Missing, or not executable by us: not a browser we can start.
    return false;
  }
}

function onPath(command, env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** Playwright's cache (`npx playwright-core install chromium`): the newest Chromium build in it. */
function inPlaywrightCache(env) {
  const root = env.PLAYWRIGHT_BROWSERS_PATH || join(env.HOME || homedir(), '.cache', 'ms-playwright');
  let entries;
  try {
    entries = readdirSync(root);
  } catch {
    return undefined;
  }
  const builds = entries
    .map((name) => ({ name, build: Number(/^chromium-(\d+)$/.exec(name)?.[1]) }))
    .filter((e) => Number.isFinite(e.build))
    .sort((a, b) => b.build - a.build);
  for (const { name } of builds) {
    for (const sub of [
      'chrome-linux64/chrome',
      'chrome-linux/chrome',
      'chrome-mac/Chromium.app/Contents/MacOS/Chromium',
    ]) {
      const path = join(root, name, sub);
      if (executable(path)) return path;
    }
  }
  return undefined;
}

/**
 * The Chromium to use, or an error saying where it looked and how to get one. A CHROME_PATH
 * that names no executable is an error, not a reason to pick another browser silently.
 */
export function findChromium(env = process.env) {
  if (env.CHROME_PATH) {
    if (executable(env.CHROME_PATH)) return { path: env.CHROME_PATH };
    return { error: `CHROME_PATH=${env.CHROME_PATH} is not an executable file (${chromiumHint})` };
  }
  for (const command of chromiumCommands) {
    const path = onPath(command, env);
    if (path) return { path };
  }
  const cached = inPlaywrightCache(env);
  if (cached) return { path: cached };
  return {
    error:
      `no Chromium found (looked at CHROME_PATH, ${chromiumCommands.join(', ')} on the PATH, ` +
      `and playwright's cache): ${chromiumHint}`,
  };
}
