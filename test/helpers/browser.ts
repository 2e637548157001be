import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (CI installs it with apt; browser downloads do not work here). */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a quiet headless run that talks to nothing but the pages it is sent to. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium with a fresh profile (playwright makes a new one per launch). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium); .ci/run does`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
