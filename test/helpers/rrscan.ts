// Test harness: runs the real `rrscan` command (compiled by `npm test`'s
// build step) and speaks HTTP to a real server process. Nothing of ours is
// mocked. Requests go through node:http with the path exactly as written,
// because fetch/URL would rewrite `\` and some escapes before sending.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'rrscan.js');
/** Real DNS data nobody here wrote (../shared/data/real); CI always has it. */
export const REAL = path.resolve(REPO, '../shared/data/real');
export const HAVE_REAL = existsSync(path.join(REAL, 'SOURCES.md'));
export const REAL_SKIP_REASON = `real data not found at ${REAL} (CI has it; these tests skip elsewhere)`;

/**
 * Files a data directory holds besides its shards: the manifest and its lock, the record of verified shards
 * (servers write it), the key store, SQLite's WAL files and the lock that records which store they belong to.
 */
export const DATA_DIR_FIXED_FILES = /^(manifest\.json|manifest\.lock|verified\.json|keys\.sqlite(-wal|-shm|-journal|\.open\.lock)?)$/;

/** Files of `dir` that are neither in `live` (the listed shards) nor fixed files: what a writer must not leave. */
export function unlistedFiles(dir: string, live: ReadonlySet<string>): string[] {
  return readdirSync(dir).filter((f) => !DATA_DIR_FIXED_FILES.test(f) && !live.has(f)).sort();
}

export function tempDir(prefix = 'rrscan-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Temporary paths of one test file: fresh() makes a directory, keep() adds a
 * file made beside one, and removeAll() (for afterAll) deletes them all.
 */
export function tempPaths(): { fresh(): string; keep(path: string): string; removeAll(): void } {
  const paths: string[] = [];
  return {
    fresh: () => {
      const d = tempDir();
      paths.push(d);
      return d;
    },
    keep: (p: string) => {
      paths.push(p);
      return p;
    },
    removeAll: () => paths.forEach(removeDir),
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `rrscan ARGS` as a command line: prefixed, when given, by another command
 * that runs it (full-disk.test.ts runs it inside a mount namespace with
 * `nsenter -t PID -m`).
 */
export function rrscanCommand(args: string[], prefix: readonly string[]): [string, string[]] {
  const argv = [process.execPath, BIN, ...args];
  return prefix.length > 0 ? [prefix[0]!, [...prefix.slice(1), ...argv]] : [argv[0]!, argv.slice(1)];
}

export function cli(args: string[], env: Record<string, string> = {}, prefix: readonly string[] = []): CliResult {
  const [file, argv] = rrscanCommand(args, prefix);
  const r = spawnSync(file, argv, {
    encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 300_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI and answers its stdout; throws with its output when it exits non-zero. */
export function cliOk(args: string[]): string {
  const r = cli(args);
  if (r.code !== 0) throw new Error(`rrscan ${args.join(' ')} failed (${r.code}): ${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Writes NDJSON lines to a file and ingests it; throws with the CLI's output on failure. */
export function ingestNdjson(dataDir: string, objects: object[], name = 'fixture.ndjson'): CliResult {
  const file = path.join(dataDir, '..', `${path.basename(dataDir)}-${name}`);
  writeFileSync(file, objects.map((o) => JSON.stringify(o)).join('\n') + '\n');
  const r = cli(['ingest', '--data', dataDir, file]);
  rmSync(file, { force: true });
  if (r.code !== 0) throw new Error(`ingest failed (${r.code}): ${r.stdout}\n${r.stderr}`);
  return r;
}

/** Adds a key through the CLI and returns it. */
export function addKey(dataDir: string, flags: string[] = ['--unlimited']): string {
  const r = cli(['keys', 'add', '--data', dataDir, ...flags]);
  if (r.code !== 0) throw new Error(`keys add failed: ${r.stderr}`);
  const key = r.stdout.trim().split('\n').pop()!.trim();
  if (!/^[0-9a-fA-F-]{16,}$/.test(key)) throw new Error(`keys add printed no key: ${r.stdout}`);
  return key;
}

export interface Server {
  url: string;
  port: number;
  /** The metrics listener's port (`--metrics-port`), when the server has one. */
  metricsPort: number | undefined;
  proc: ChildProcess;
  stderr: () => string;
  close(): Promise<void>;
}

export async function startServer(dataDir: string, extra: string[] = [], env: Record<string, string> = {},
  prefix: readonly string[] = []): Promise<Server> {
  const [file, argv] = rrscanCommand(['serve', '--data', dataDir, '--port', '0', ...extra], prefix);
  const proc = spawn(file, argv, {
    env: { ...process.env, RRSCAN_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}\n${err}`)), 30_000);
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (https?:\/\/\S+?)\/pdns\/v2\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}\n${err}`));
    });
  });
  // serve prints the metrics line before the one waited for above.
  const metrics = /rrscan metrics at (http:\/\/\S+?)\/metrics/.exec(out);
  return {
    url,
    port: Number(new URL(url).port),
    metricsPort: metrics ? Number(new URL(metrics[1]!).port) : undefined,
    proc,
    stderr: () => err,
    close: () => new Promise<void>((resolve) => {
      if (proc.exitCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5_000).unref();
    }),
  };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** GET `path` (sent byte for byte as given) on the server. */
export function get(server: { port: number }, pathAndQuery: string, headers: Record<string, string> = {},
  method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: pathAndQuery, method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
    req.on('error', reject);
    req.end();
  });
}

// The framing lines of a stream (spec 6), and the exact body a stream of
// objects makes, for assertions on whole bodies.
export const begin = { cond: 'begin' };
export const ok = { cond: 'succeeded' };
export const none = { cond: 'succeeded', msg: 'Query completed, no results found' };
export const limited = { cond: 'limited', msg: 'Result limit reached' };
export const body = (...objs: object[]): string => objs.map((o) => JSON.stringify(o) + '\n').join('');

/**
 * A body with its keep-alive lines taken out, and how many there were (each
 * exactly `{}`): where they fall depends on how long the server waited, not
 * on the answer.
 */
export function withoutKeepAlives(text: string): { body: string; keepAlives: number } {
  const all = text.split('\n');
  const kept = all.filter((l) => l !== '{}');
  return { body: kept.join('\n'), keepAlives: all.length - kept.length };
}

/**
 * A reply's answer: its body without keep-alive lines, for comparing two
 * servers' answers to one query. Besides the wait, a stream that ends while
 * its reader pushes back writes a `{}` probe before its terminator
 * (saf-writer.ts drainStep), so a busy test process sees one at times.
 */
export const answer = (r: Reply): string => withoutKeepAlives(r.body).body;

/** Parses an NDJSON body into objects (asserting every line ends with \n and none is blank). */
export function lines(body: string): unknown[] {
  if (body.length > 0 && !body.endsWith('\n')) throw new Error(`body does not end with a newline: ${JSON.stringify(body.slice(-80))}`);
  const parts = body.split('\n').slice(0, -1);
  for (const p of parts) if (p === '') throw new Error('blank line in stream');
  return parts.map((p) => JSON.parse(p) as unknown);
}

/** The `obj` payloads of a stream, keep-alives dropped. */
export function objects(body: string): Record<string, unknown>[] {
  return (lines(body) as Record<string, unknown>[]).filter((l) => 'obj' in l).map((l) => l['obj'] as Record<string, unknown>);
}

/** One piece of a response body and when it arrived (performance.now() of the test process). */
export interface TimedChunk {
  ms: number;
  text: string;
}

export interface StreamingReply {
  /** Settles when the status line and headers have arrived. */
  response: Promise<{ status: number; headers: http.IncomingHttpHeaders }>;
  /** Settles with the first body chunk (rejects if the response ends without one). */
  firstChunk: Promise<TimedChunk>;
  /** Settles when the body has ended, or when abort() hung up; `complete` tells which. */
  done: Promise<{ status: number; body: string; chunks: TimedChunk[]; complete: boolean; sentMs: number }>;
  /** True once `done` has settled. */
  ended(): boolean;
  /** Hangs up mid-stream (destroys the socket) and returns when, in performance.now() time. */
  abort(): number;
}

/**
 * GET that records when each body chunk arrives and can hang up mid-stream,
 * as a client that gives up on a long scan does.
 */
export function streamGet(server: { port: number }, pathAndQuery: string, headers: Record<string, string> = {}): StreamingReply {
  const chunks: TimedChunk[] = [];
  const sentMs = performance.now();
  let status = 0;
  let onResponse!: (r: { status: number; headers: http.IncomingHttpHeaders }) => void;
  let onFirst!: (c: TimedChunk) => void;
  let noFirst!: (e: Error) => void;
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((r) => { onResponse = r; });
  const firstChunk = new Promise<TimedChunk>((resolve, reject) => { onFirst = resolve; noFirst = reject; });
  firstChunk.catch(() => undefined);
  let req!: http.ClientRequest;
  let ended = false;
  const done = new Promise<{ status: number; body: string; chunks: TimedChunk[]; complete: boolean; sentMs: number }>((resolve, reject) => {
    let settled = false;
    const settle = (complete: boolean) => {
      if (settled) return;
      settled = true;
      ended = true;
      noFirst(new Error(`response ended without a body chunk (status ${status})`));
      resolve({ status, body: chunks.map((c) => c.text).join(''), chunks, complete, sentMs });
    };
    req = http.request({ host: '127.0.0.1', port: server.port, path: pathAndQuery, headers, agent: false }, (res) => {
      status = res.statusCode ?? 0;
      onResponse({ status, headers: res.headers });
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        const c = { ms: performance.now(), text };
        chunks.push(c);
        if (chunks.length === 1) onFirst(c);
      });
      res.on('end', () => settle(true));
      res.on('close', () => settle(res.complete));
      res.on('error', () => settle(false));
    });
    req.on('error', (err) => (settled ? undefined : chunks.length > 0 || status !== 0 ? settle(false) : reject(err)));
    req.end();
  });
  return {
    response, firstChunk, done,
    ended: () => ended,
    abort() {
      const at = performance.now();
      req.destroy();
      return at;
    },
  };
}

/** Deterministic names: a random-looking first label of 20-39 characters of [a-z0-9], then a fixed suffix. */
export function randomNames(count: number, suffix: string, seed: number): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const out: string[] = [];
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    return s >>> 8;
  };
  for (let i = 0; i < count; i++) {
    let label = '';
    const length = 20 + (next() % 20);
    for (let j = 0; j < length; j++) label += alphabet[next() % alphabet.length];
    out.push(`${label}.host${i % 97}.${suffix}`);
  }
  return out;
}

/** Sends a GET on a raw socket and never reads the answer: the request stays in flight until destroy(). */
export async function stalledGet(port: number, p: string, key: string): Promise<net.Socket> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  sock.write(`GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`);
  // Wait for the first bytes (the request was admitted) without consuming the stream.
  await new Promise<void>((resolve) => sock.once('readable', resolve));
  return sock;
}

/** The service log's JSON lines so far. */
export function logLines(server: Server): Record<string, unknown>[] {
  return server.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Requests answered by each member, from the request log. */
export function requestsByMember(server: Server): Map<number, number> {
  const counts = new Map<number, number>();
  for (const l of logLines(server)) {
    if (l['msg'] === 'request') counts.set(l['member'] as number, (counts.get(l['member'] as number) ?? 0) + 1);
  }
  return counts;
}

/** The pid of each member slot, the latest start winning. */
export function memberPids(server: Server): Map<number, number> {
  const pids = new Map<number, number>();
  for (const l of logLines(server)) {
    if (l['msg'] === 'front-end process started') pids.set(l['member'] as number, l['pid'] as number);
  }
  return pids;
}

/** Polls `ok` every `stepMs` until it holds; fails naming `what` once `ms` have passed. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000, stepMs = 25): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** The unlabelled series `name` of a server's /metrics (started with --metrics-port). */
export async function metric(server: Server, name: string): Promise<number> {
  const r = await get({ port: server.metricsPort! }, '/metrics');
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(r.body);
  if (m === null) throw new Error(`no series ${name}`);
  return Number(m[1]);
}
