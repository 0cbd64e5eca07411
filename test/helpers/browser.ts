// Test harness: Debian's chromium, driven by playwright-core (no browser
// download), for the web console's tests. Each launch gets a fresh profile
// directory, deleted on close. The flags keep a headless chromium from
// reaching for the network (this machine's is closed, and CI's may be):
// no QUIC, no first-run, background, component-update or sync traffic.
//
// Tests that need it use describe.skipIf(!HAVE_CHROMIUM) and print
// CHROMIUM_SKIP_REASON when it is missing. Screenshots go to
// test-results/console/ (gitignored): test artefacts to look at.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { REPO } from './rrscan.js';
import { onPath } from './redis-server.js';

export const CHROMIUM = onPath('chromium');
export const HAVE_CHROMIUM = CHROMIUM !== undefined;
export const CHROMIUM_SKIP_REASON = 'chromium is not on PATH (install the Debian package chromium); the web console tests skip';
export const SCREENSHOTS = path.join(REPO, 'test-results', 'console');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (CHROMIUM === undefined) throw new Error(CHROMIUM_SKIP_REASON);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const profile = mkdtempSync(path.join(os.tmpdir(), 'rrscan-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, acceptDownloads: true, viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
