// Where the package's own files are, whether running compiled (dist/src/...)
// or from TypeScript sources under vitest (src/...).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'schema'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('rrscan package root not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();
/** Compiled JavaScript (workers must be loaded from here: Piscina runs plain .js). */
export const DIST_ROOT = path.join(PACKAGE_ROOT, 'dist');
