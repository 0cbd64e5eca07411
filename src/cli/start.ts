// `rrscan start`, what `npm start` runs: the demo dataset and a key the
// first time, then serve ($RRSCAN_DATA or ./data, $PORT or 8080,
// $RRSCAN_HOST or 127.0.0.1).

import type { Command } from 'commander';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addKey, hasKeys } from '../auth/key-admin.js';
import { sqliteKeyStoreConfig } from '../auth/stores/open-key-store.js';
import { LIMITS } from '../config/limits.js';
import { readManifest } from '../shard/manifest.js';
import { DEMO_RECORDS_DEFAULT, runDemo } from './demo.js';
import { serveUntilSignal } from './serve.js';

const DEMO_KEY_FILE = 'demo-key.txt';

export function registerStartCommand(program: Command): void {
  program.command('start')
    .description('what `npm start` runs: demo data and a key if missing, then serve ($RRSCAN_DATA or ./data, $PORT or 8080, ' +
      '$RRSCAN_HOST or 127.0.0.1)')
    .action(async () => {
      const data = path.resolve(process.env['RRSCAN_DATA'] ?? 'data');
      const port = Number(process.env['PORT'] ?? 8080);
      // Loopback unless asked: the demo key is unlimited. The container image asks for 0.0.0.0 (deploy/Dockerfile).
      const host = process.env['RRSCAN_HOST'] ?? '127.0.0.1';
      mkdirSync(data, { recursive: true });
      if (readManifest(data).shards.length === 0) {
        console.log(`rrscan: no shards in ${data}; generating the demo dataset (${DEMO_RECORDS_DEFAULT} RRsets) once`);
        await runDemo(data, DEMO_RECORDS_DEFAULT);
      }
      const keyFile = path.join(data, DEMO_KEY_FILE);
      const keyStore = sqliteKeyStoreConfig(data);
      if (!(await hasKeys(keyStore))) {
        // Keys are stored hashed; the demo key is also kept in clear here so
        // that every `npm start` can print it. Real keys never are.
        const key = await addKey(keyStore, { quota: { kind: 'unlimited' } });
        writeFileSync(keyFile, key + '\n', { mode: 0o600 });
      }
      const key = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '<your key>';
      await serveUntilSignal({ data, host, port, shutdownGraceMs: LIMITS.shutdownGraceMs }, (url) => {
        console.log(`\nrrscan is serving ${data}\n  base URL: ${url}/pdns/v2/\n  demo key: ${key}\n  console:  ${url}/console/\n`);
        console.log(`Try:\n  curl -sH 'X-API-Key: ${key}' '${url}/pdns/v2/regex/rrnames/paypal?limit=5'\n`);
      });
    });
}
