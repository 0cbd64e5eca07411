// Micro-benchmark: what authorising and charging costs per request.
//
// Runs AccessGate.authenticate() + charge() + release() for an unlimited key (no write per
// request) and a daily-quota key (group-committed SQLite charge), in the same
// run, at several "requests per event-loop turn" (uWebSockets.js hands the
// server every request of one epoll wake-up in one turn; the ledger commits
// one transaction per turn). Prints ops/s and microseconds per request, and
// what share of a 25k req/s server's per-request budget (40 us) that is: the
// issue's target is that the quota path costs at most 10% of throughput.
//
// Run: npm run build && node dist/bench/micro/quota.js [seconds-per-sample, default 0.4]

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { AccessGate } from '../../src/auth/access-gate.js';
import type { Endpoint } from '../../src/auth/access-gate.js';
import { addKey } from '../../src/auth/key-admin.js';

const SERVER_REQ_PER_SEC = 25_000;
const BUDGET_US = 1e6 / SERVER_REQ_PER_SEC;
const TURN_SIZES = [1, 8, 32, 128];
const ROUNDS = 5;

interface Case { name: string; key: string; endpoint: Endpoint }

async function admit(gate: AccessGate, c: Case): Promise<{ release(): void }> {
  return gate.charge(await gate.authenticate(c.key, '192.0.2.1', c.endpoint), c.endpoint);
}

async function measure(gate: AccessGate, c: Case, perTurn: number, seconds: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const pending: Array<Promise<{ release(): void }>> = new Array(perTurn);
  while (performance.now() < deadline) {
    for (let i = 0; i < perTurn; i++) pending[i] = admit(gate, c);
    const grants = await Promise.all(pending);
    for (const g of grants) g.release();
    done += perTurn;
  }
  return done / seconds;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 0.4);
  const require = createRequire(import.meta.url);
  const sqliteVersion = (require('better-sqlite3/package.json') as { version: string }).version;
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  console.log(`# quota micro-benchmark: node ${path.relative(process.cwd(), process.argv[1] ?? '')} ${seconds}`);
  console.log(`# node ${process.version}, better-sqlite3 ${sqliteVersion}, ${cpu} x${os.cpus().length}, ${os.platform()}, ` +
    `load average ${os.loadavg()[0]!.toFixed(2)}`);
  console.log(`# ${ROUNDS} interleaved rounds of ${seconds} s per case, median shown; one key per case, store in ${os.tmpdir()}`);
  console.log(`# budget per request of a ${SERVER_REQ_PER_SEC} req/s server: ${BUDGET_US} us; target: quota path <= 10% of it`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-bench-quota-'));
  try {
    const cases: Case[] = [
      { name: 'unlimited', key: await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' } }), endpoint: 'lookup' },
      {
        name: 'daily', endpoint: 'lookup',
        key: await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'daily', limit: Number.MAX_SAFE_INTEGER } }),
      },
    ];
    const gate = AccessGate.open({ kind: 'sqlite', dataDir: dir });
    // Warm up: JIT, statement cache, WAL file.
    for (const c of cases) await measure(gate, c, 32, 0.3);
    console.log('case          req/turn      ops/s   us/req  share of 40 us');
    const usPerReq = new Map<string, number>();
    for (const perTurn of TURN_SIZES) {
      const samples = cases.map(() => [] as number[]);
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < cases.length; i++) samples[i]!.push(await measure(gate, cases[i]!, perTurn, seconds));
      }
      for (let i = 0; i < cases.length; i++) {
        const opsPerSec = median(samples[i]!);
        const us = 1e6 / opsPerSec;
        usPerReq.set(`${cases[i]!.name}/${perTurn}`, us);
        console.log(`${cases[i]!.name.padEnd(12)}  ${String(perTurn).padStart(8)}  ${Math.round(opsPerSec).toString().padStart(9)}  ` +
          `${us.toFixed(2).padStart(7)}  ${((100 * us) / BUDGET_US).toFixed(1).padStart(13)}%`);
      }
    }
    gate.close();
    for (const perTurn of TURN_SIZES) {
      const extra = usPerReq.get(`daily/${perTurn}`)! - usPerReq.get(`unlimited/${perTurn}`)!;
      console.log(`# ${String(perTurn).padStart(3)} req/turn: daily costs ${extra.toFixed(2)} us/req more than unlimited` +
        ` = ${((100 * extra) / BUDGET_US).toFixed(1)}% of a 25k req/s server's budget`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
