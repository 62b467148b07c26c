// Debian's chromium driven by playwright-core (which downloads no browser). CI installs the
// package (.ci/run); a missing binary fails the test with the command to fix it, never skips.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';

export async function launchChromium(executablePath = chromiumPath): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `${executablePath} not found: the HTML report's browser tests need Debian's chromium ` +
        '(apt-get update && apt-get install -y chromium; .ci/run installs it)',
    );
  }
  return chromium.launch({
    executablePath,
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
