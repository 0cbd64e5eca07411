// The two guarantees that need real processes: exact counters when several
// server processes share one data directory, and no quota handed back when
// a process is killed with SIGKILL in the middle of charging.

import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../../src/auth/key-material.js';
import { addKey } from '../../../src/auth/key-admin.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';
import { transpileAuth } from './child-harness.js';
import type { Transpiled } from './child-harness.js';

// The child: opens its own AccessGate on the shared directory and charges.
//   burst N:     waits for "go" on stdin, fires N admissions at once, prints {"ok":..,"limited":..,"other":..}
//   stream N:    keeps N admissions in flight; prints "ok" (synchronously) after each grant, exits on a refusal
const CHILD = `
import { writeSync } from 'node:fs';
import { AccessGate } from './src/auth/access-gate.js';
const [dataDir, key, mode, nText] = process.argv.slice(2);
const n = Number(nText);
const gate = AccessGate.open({ kind: 'sqlite', dataDir });
const admit = async (endpoint) => gate.charge(await gate.authenticate(key, '127.0.0.1', endpoint), endpoint);
if (mode === 'burst') {
  process.stdout.write('ready\\n');
  process.stdin.once('data', async () => {
    const results = await Promise.allSettled(Array.from({ length: n }, () => admit('lookup')));
    const count = { ok: 0, limited: 0, other: [] };
    for (const r of results) {
      if (r.status === 'fulfilled') count.ok++;
      else if (r.reason.code === 'RATE_LIMITED') count.limited++;
      else count.other.push(String(r.reason));
    }
    gate.close();
    process.stdout.write(JSON.stringify(count) + '\\n');
    process.exit(0);
  });
} else {
  let done = false;
  const next = () => {
    admit('flex').then((grant) => {
      writeSync(1, 'ok\\n');
      grant.release();
      if (!done) next();
    }, (err) => {
      if (done) return;
      done = true;
      writeSync(1, 'refused ' + err.code + '\\n');
      gate.close();
      process.exit(0);
    });
  };
  for (let i = 0; i < n; i++) next();
}
`;

let compiled: Transpiled;
let childScript: string;
let dir: string;

beforeAll(() => {
  compiled = transpileAuth();
  childScript = path.join(compiled.root, 'charge-child.mjs');
  writeFileSync(childScript, CHILD);
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-procs-'));
});

afterAll(() => {
  compiled?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function child(key: string, mode: 'burst' | 'stream', n: number): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [childScript, dir, key, mode, String(n)], { stdio: 'pipe' });
}

function lines(proc: ChildProcessWithoutNullStreams, onLine: (line: string) => void): Promise<number | null> {
  let buf = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => {
      if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`child exited ${code} ${signal}: ${err}`));
      else resolve(code);
    });
  });
}

function committedUsage(key: string): { periodUsed: number; totalUsed: number } {
  const store = SqliteKeyStore.open(dir);
  try {
    return store.record(hashKey(key))!.usage;
  } finally {
    store.close();
  }
}

describe('several processes sharing one data directory', () => {
  it('1,000 concurrent requests from 4 processes on a block of 500 give exactly 500 grants', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'block', limit: 500 } });
    const procs = Array.from({ length: 4 }, () => child(key, 'burst', 250));
    const counts: Array<{ ok: number; limited: number; other: string[] }> = [];
    let ready = 0;
    const exits = procs.map((p) => lines(p, (line) => {
      if (line === 'ready') {
        // Start them all together so their transactions really contend.
        if (++ready === procs.length) for (const q of procs) q.stdin.write('go\n');
      } else {
        counts.push(JSON.parse(line) as { ok: number; limited: number; other: string[] });
      }
    }));
    await Promise.all(exits);
    expect(counts.length).toBe(4);
    expect(counts.flatMap((c) => c.other)).toEqual([]);
    expect(counts.reduce((s, c) => s + c.ok, 0)).toBe(500);
    expect(counts.reduce((s, c) => s + c.limited, 0)).toBe(500);
    expect(committedUsage(key)).toMatchObject({ periodUsed: 500, totalUsed: 500 });
  });

  it('the same holds for a daily quota', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'daily', limit: 300 } });
    const procs = Array.from({ length: 3 }, () => child(key, 'burst', 200));
    const counts: number[] = [];
    let ready = 0;
    await Promise.all(procs.map((p) => lines(p, (line) => {
      if (line === 'ready') {
        if (++ready === procs.length) for (const q of procs) q.stdin.write('go\n');
      } else {
        counts.push((JSON.parse(line) as { ok: number }).ok);
      }
    })));
    expect(counts.reduce((s, c) => s + c, 0)).toBe(300);
    expect(committedUsage(key).periodUsed).toBe(300);
  });
});

describe('kill -9 in the middle of charging', () => {
  it('never hands back quota that was granted, and the store stays sound', async () => {
    const LIMIT = 600;
    const IN_FLIGHT = 16;
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'block', limit: LIMIT } });
    let acked = 0;
    let rounds = 0;
    let exhausted = false;
    while (!exhausted) {
      rounds++;
      expect(rounds).toBeLessThan(50);
      const proc = child(key, 'stream', IN_FLIGHT);
      // Kill after a varying number of grants, while more are being charged.
      const killAfter = 40 + ((rounds * 37) % 90);
      let seen = 0;
      await lines(proc, (line) => {
        if (line === 'ok') {
          acked++;
          if (++seen === killAfter) proc.kill('SIGKILL');
        } else {
          expect(line).toBe('refused RATE_LIMITED');
          exhausted = true;
        }
      });
      const used = committedUsage(key).periodUsed;
      // Every grant a client saw is committed; at most the charges in flight were committed unseen.
      expect(used).toBeGreaterThanOrEqual(acked);
      expect(used).toBeLessThanOrEqual(Math.min(LIMIT, acked + rounds * IN_FLIGHT));
    }
    // At least one child died mid-charge before the block ran out. (Not "more than two rounds": on a loaded
    // machine a child's pipe may hold hundreds of grants more than the parent had read when it sent the kill.)
    expect(rounds).toBeGreaterThanOrEqual(2);
    // Killing never let more than the block through.
    expect(acked).toBeLessThanOrEqual(LIMIT);
    expect(committedUsage(key).periodUsed).toBe(LIMIT);
    const db = new Database(path.join(dir, 'keys.sqlite'));
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    } finally {
      db.close();
    }
  });
});
