// Test harness: ClickHouse 26.7's engine (chdb, in this process) behind the
// part of ClickHouse's HTTP interface that src/clickhouse/client.ts speaks,
// so the same `rrscan clickhouse init`, `ingest --clickhouse-url` and
// `serve --clickhouse-url` that run against Debian's clickhouse-server 18.16
// run against a current release too. Debian has no newer server, and chdb is
// the real engine (parser, analyzer, functions, MergeTree, skip indexes).
//
// What it does, and nothing more (the SQL is never rewritten):
// - POST /ping and GET /ping answer "Ok.\n".
// - POST /?PARAMS with the SQL as the body: every URL parameter but `query`
//   and `query_id` is a setting, applied with SET on a session of its own
//   (HTTP requests are sessionless in ClickHouse, so settings never leak to
//   the next request; the engine refuses a setting it does not know, and
//   readonly=1/2 refuses what ClickHouse's readonly refuses). The answer is
//   in the FORMAT the SQL names, TabSeparated when it names none (as over
//   HTTP), status 200.
// - POST /?query=INSERT INTO t FORMAT F with the data as the body: the body
//   goes to a scratch file and the engine runs `INSERT INTO t FROM INFILE
//   'file' FORMAT F` (chdb has no request body to read data from). Only that
//   statement shape is taken with a body; anything else is refused with 501.
// - An error is status 500 with the engine's own text ("Code: N.
//   DB::Exception: ..."); a server maps some codes to 400/404/403 instead,
//   which client.ts does not distinguish (any non-200 is an error).
//
// What it does NOT emulate, proven on the 18.16 server instead
// (test/integration/clickhouse-differential.test.ts, clickhouse-cluster.test.ts):
// streaming (an answer is computed whole, then sent, so there are no
// mid-stream errors and no backpressure into the engine), query_id (not
// settable in chdb: KILL QUERY finds nothing), cancellation on hang-up,
// concurrency (requests run one at a time, in arrival order), Distributed
// tables and shards, users, quotas, compression, HTTP GET queries.
//
// It runs as a process of its own (node dist/test/helpers/chdb-http.js
// --dir DIR, built by `npm run build`): the tests and benches call
// `rrscan` with spawnSync, which would stall a server in their own event
// loop, and libchdb binds one data directory per process. startChdbHttp()
// starts it on a scratch directory and resolves once /ping answers; close()
// kills it by its PID, waits for it to exit and deletes the directory.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Chdb from 'chdb';
import { sqlString } from '../../src/clickhouse/literal.js';

const require = createRequire(import.meta.url);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..', ...(import.meta.url.includes('/dist/') ? ['..'] : []));
/** The built form of this file: the process startChdbHttp() runs. */
const SERVER_JS = path.join(REPO, 'dist', 'test', 'helpers', 'chdb-http.js');
const START_TIMEOUT_MS = 30_000;
const READY = /^chdb-http listening on (\d+), ClickHouse (\S+)$/m;

function loadChdb(): typeof Chdb | undefined {
  try {
    return require('chdb') as typeof Chdb;
  } catch {
    return undefined;
  }
}

const chdb = loadChdb();
export const HAVE_CHDB = chdb !== undefined;
export const CHDB_SKIP_REASON = 'chdb (devDependency: ClickHouse 26.7 in process) cannot be loaded; the current-release runs skip';

/** The largest request body taken (an ingest batch of RowBinary rows is well under this). */
const BODY_BYTES_MAX = 256 << 20;
/** The one statement shape taken with a data body: the table and format of client.ts insertRowBinary. */
const INSERT_WITH_DATA = /^INSERT INTO ([A-Za-z0-9_.`]+) FORMAT ([A-Za-z]+)$/;
const SETTING_NAME = /^[a-z][a-z0-9_]{0,99}$/;
/** Not settings: what ClickHouse's HTTP handler reads itself. */
const NOT_SETTINGS = new Set(['query', 'query_id']);

/** The shape of test/helpers/clickhouse-server.ts ClickHouseServer, so tests take either. */
export interface ChdbHttp {
  readonly httpPort: number;
  readonly url: string;
  readonly dir: string;
  errors(): string;
  /** Resident memory of the chdb-http process, KiB. */
  rssKiB(): number;
  close(): Promise<void>;
  /** The engine's version, e.g. "26.7.2.1". */
  readonly version: string;
}

class HttpRefusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > BODY_BYTES_MAX) {
        req.destroy();
        reject(new HttpRefusal(413, `body over ${BODY_BYTES_MAX} bytes`));
        return;
      }
      parts.push(d);
    });
    req.once('end', () => resolve(Buffer.concat(parts)));
    req.once('error', reject);
  });
}

/** `SET name = value` statements for the URL's settings; readonly last, since readonly=1 refuses any SET after it. */
function settingStatements(params: URLSearchParams): string[] {
  const sets: string[] = [];
  let readonly: string | undefined;
  for (const [name, value] of params) {
    if (NOT_SETTINGS.has(name)) continue;
    if (!SETTING_NAME.test(name)) throw new HttpRefusal(400, `not a setting name: ${name}`);
    const literal = /^\d{1,18}$/.test(value) ? value : sqlString(value);
    if (name === 'readonly') readonly = literal;
    else sets.push(`SET ${name} = ${literal}`);
  }
  if (readonly !== undefined) sets.push(`SET readonly = ${readonly}`);
  return sets;
}

/** Serves `dataPath` through the engine on a free loopback port (the process startChdbHttp runs). */
async function serveChdbHttp(dir: string): Promise<{ port: number; version: string }> {
  if (chdb === undefined) throw new Error(CHDB_SKIP_REASON);
  const engine = chdb;
  const dataPath = path.join(dir, 'data');
  // The first session holds the data path for the process; requests get sessions of their own beside it.
  const root = new engine.Session(dataPath);
  const version = (await root.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();
  let uploads = 0;
  let queue: Promise<unknown> = Promise.resolve();

  async function run(params: URLSearchParams, body: Buffer): Promise<Uint8Array> {
    const inUrl = params.get('query');
    let sql: string;
    let upload: string | undefined;
    if (inUrl !== null && body.length > 0) {
      const m = INSERT_WITH_DATA.exec(inUrl.trim());
      if (!m) throw new HttpRefusal(501, `chdb-http takes a data body only for INSERT INTO t FORMAT F, not: ${inUrl.slice(0, 200)}`);
      upload = path.join(dir, `upload-${++uploads}.bin`);
      writeFileSync(upload, body);
      sql = `INSERT INTO ${m[1]!} FROM INFILE ${sqlString(upload)} FORMAT ${m[2]!}`;
    } else {
      sql = (inUrl ?? '') + body.toString('utf8');
    }
    const session = new engine.Session(dataPath);
    try {
      for (const set of settingStatements(params)) await session.queryAsync(set);
      return (await session.queryAsync(sql, { format: 'TabSeparated' })).bytes();
    } finally {
      session.close();
      if (upload !== undefined) rmSync(upload, { force: true });
    }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = { 'content-type': 'text/plain; charset=UTF-8' };
    if (url.pathname === '/ping') {
      res.writeHead(200, text).end('Ok.\n');
      return;
    }
    if (url.pathname !== '/' || req.method !== 'POST') {
      res.writeHead(404, text).end('chdb-http answers POST / and /ping only\n');
      return;
    }
    const answer = queue.then(async () => run(url.searchParams, await readBody(req)));
    queue = answer.catch(() => undefined);
    answer.then((bytes) => {
      res.writeHead(200, text).end(bytes);
    }, (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      res.writeHead(err instanceof HttpRefusal ? err.status : 500, text).end(`${message}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, version };
}

/** Starts a chdb-http process on a scratch directory; resolves once it answers /ping. */
export async function startChdbHttp(): Promise<ChdbHttp> {
  if (chdb === undefined) throw new Error(CHDB_SKIP_REASON);
  if (!existsSync(SERVER_JS)) throw new Error(`${SERVER_JS} is missing: run npm run build`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-chdb-'));
  const child = spawn(process.execPath, [SERVER_JS, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const ready = await new Promise<RegExpExecArray | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), START_TIMEOUT_MS);
    const look = () => {
      const m = READY.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', look);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  if (ready === undefined) {
    await stop();
    throw new Error(`chdb-http did not start: ${out}`);
  }
  const httpPort = Number(ready[1]);
  return {
    httpPort, url: `http://127.0.0.1:${httpPort}`, dir, version: ready[2]!,
    errors: () => out,
    rssKiB: () => {
      try {
        const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Number(m[1]) : 0;
      } catch {
        return 0;
      }
    },
    close: stop,
  };
}

/** As a process: `node chdb-http.js --dir DIR` serves DIR/data until killed. */
async function main(): Promise<void> {
  const at = process.argv.indexOf('--dir');
  const dir = at > 0 ? process.argv[at + 1] : undefined;
  if (dir === undefined) throw new Error('usage: node chdb-http.js --dir DIR');
  const s = await serveChdbHttp(dir);
  process.stdout.write(`chdb-http listening on ${s.port}, ClickHouse ${s.version}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
