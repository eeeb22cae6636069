// Debian's Chromium, headless, driven by playwright-core (no browser download). The flags keep it off the
// network: this machine's network is closed, and Chromium's background connections would only fail.
// Without Chromium the browser tests are skipped, and test/support/missing-chromium-reporter.js says once, after
// the summary, what to install; in CI (CI=true) they run and fail instead, because .ci/run installs it.
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
/** Titles of skipped browser suites start with this; the reporter looks for it. */
const SKIPPED = 'needs Chromium, skipped: ';

/** Why Chromium cannot be launched here (with what to install), or undefined when it can. */
export function chromiumMissing(): string | undefined {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install chromium\` (Debian), or set CHROMIUM_PATH to a Chromium binary`;
  }
}

/** describe() for tests that drive Chromium: skipped where it is missing, except in CI, where they must fail. */
export function describeInChromium(title: string, tests: () => void): void {
  const missing = chromiumMissing();
  if (missing && !IN_CI) describe.skip(`${SKIPPED}${missing}`, tests);
  else describe(title, tests);
}

export function launchChromium(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing)
    throw new Error(
      `${missing}${IN_CI ? ' (CI=true: the browser tests must run; .ci/run installs it)' : ''}`,
    );
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
