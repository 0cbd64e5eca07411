// Shared pieces of the benchmarks: the environment line every run prints,
// percentiles, starting a real server process, and timed HTTP requests.
//
// Every benchmark prints the command that reproduces it, the versions, the
// data size, and a baseline measured in the same run (style.md habit 10).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/config/paths.js';

export const BIN = path.join(PACKAGE_ROOT, 'bin', 'rrscan.js');
export const OUT = path.join(PACKAGE_ROOT, 'bench', 'out');

export function environment(): string {
  const rg = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  return [
    `node ${process.version}`,
    `${os.cpus().length}x ${os.cpus()[0]?.model ?? 'cpu'}`,
    `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    `rrscan ${process.env['npm_package_version'] ?? ''}`.trim(),
    rg.status === 0 ? rg.stdout.split('\n')[0] : 'ripgrep not installed',
  ].join(' | ');
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

export interface BenchServer {
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export async function startServer(dataDir: string, extraEnv: Record<string, string> = {}): Promise<BenchServer> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--data', dataDir, '--port', '0'], {
    env: { ...process.env, RRSCAN_LOG_LEVEL: 'warn', ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at https?:\/\/[^:]+:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    port, proc,
    stop: () => new Promise((r) => { proc.once('exit', () => r()); proc.kill('SIGTERM'); }),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One GET; resolves with status, body length and wall milliseconds. */
export function timedGet(
  port: number, pathAndQuery: string, headers: Record<string, string>,
): Promise<{ status: number; bytes: number; ms: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, bytes: body.length, ms: performance.now() - t0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

export function rss(pid: number): number {
  const r = spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  return Number(r.stdout.trim()) * 1024;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
