// Loads one of our own addons (native/*.cc, built by `npm install` into
// native/build/Release). One loader, so that every addon is found the same
// way from compiled code and from sources under vitest, and a missing build
// says what to run instead of a bare "cannot find module".

import { createRequire } from 'node:module';
import path from 'node:path';
import { PACKAGE_ROOT } from '../config/paths.js';

const require = createRequire(import.meta.url);

/** The addon `native/build/Release/<name>.node`, typed by the caller. */
export function loadAddon<T>(name: string): T {
  const file = path.join(PACKAGE_ROOT, 'native', 'build', 'Release', `${name}.node`);
  try {
    return require(file) as T;
  } catch (err) {
    throw new Error(`native addon ${name} did not load (${file}): ${(err as Error).message}; run \`npm run build\``);
  }
}
