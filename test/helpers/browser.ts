// A Chromium driven by playwright-core (which downloads no browser), found wherever it is
// (scripts/find-chromium.mjs: CHROME_PATH, Debian's chromium and the like on the PATH,
// playwright's cache); `npm test` installs Debian's when run as root. A missing browser fails
// the test with how to get one, never skips.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

interface ChromiumFinder {
  findChromium: (env?: NodeJS.ProcessEnv) => { path?: string; error?: string };
  chromiumHint: string;
}

// Plain JavaScript shared with the pre-test check, which runs before anything is compiled.
const finder = (await import(
  new URL('../../../scripts/find-chromium.mjs', import.meta.url).href
)) as ChromiumFinder;

export async function launchChromium(executablePath?: string): Promise<Browser> {
  if (executablePath !== undefined && !existsSync(executablePath))
    throw new Error(`${executablePath} not found: ${finder.chromiumHint}`);
  const found = executablePath === undefined ? finder.findChromium() : { path: executablePath };
  if (!found.path) throw new Error(found.error);
  return chromium.launch({
    executablePath: found.path,
    headless: true,
    // Without the background-networking flags Chromium reaches for the (closed) network.
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
