// Runs src/auth in separate Node processes for the multi-process and kill -9
// tests. Node 20 cannot load TypeScript and these tests must not depend on
// the whole tree compiling, so the few modules src/auth needs are transpiled
// (types stripped, nothing else changed) into `.vitest-tmp/` under the repo,
// where `better-sqlite3` still resolves from the repo's node_modules.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// src/auth and what it imports from elsewhere: the key file's lock (shard/file-lock.ts) loads its addon
// through lib/native.ts, which finds the package root above the transpiled tree (config/paths.ts).
const SOURCES = ['src/auth', 'src/errors/catalogue.ts', 'src/config/limits.ts', 'src/config/paths.ts', 'src/lib/faults.ts',
  'src/lib/native.ts', 'src/shard/file-lock.ts', 'src/lib/address-allow-list.ts'];

/** The .ts files of a file or directory, subdirectories (src/auth/stores/) included. */
function tsFiles(rel: string): string[] {
  if (rel.endsWith('.ts')) return [rel];
  return readdirSync(path.join(REPO, rel), { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return tsFiles(`${rel}/${e.name}`);
    return e.name.endsWith('.ts') ? [`${rel}/${e.name}`] : [];
  });
}

export interface Transpiled {
  /** Root holding src/... as .js; import `${root}/src/auth/access-gate.js`. */
  root: string;
  remove(): void;
}

export function transpileAuth(): Transpiled {
  const root = path.join(REPO, '.vitest-tmp', `auth-${process.pid}-${Date.now()}`);
  for (const rel of SOURCES.flatMap(tsFiles)) {
    const out = ts.transpileModule(readFileSync(path.join(REPO, rel), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      fileName: rel,
    });
    const dest = path.join(root, rel.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(dest, out.outputText);
  }
  // Make the transpiled tree ESM regardless of what surrounds it.
  writeFileSync(path.join(root, 'package.json'), '{"type":"module"}\n');
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
