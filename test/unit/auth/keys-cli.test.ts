// `rrscan keys ...` through commander exactly as main.ts registers it, with
// output captured instead of written to the terminal.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccessGate } from '../../../src/auth/access-gate.js';
import type { Endpoint } from '../../../src/auth/access-gate.js';
import { hashKey } from '../../../src/auth/key-material.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';
import { registerKeysCommand } from '../../../src/cli/keys.js';
import { describeEachKeyStore } from '../../helpers/redis-server.js';

interface Run { ok: boolean; out: string; err: string }

let dir: string;

async function run(...args: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const program = new Command('rrscan');
  program.exitOverride().configureOutput({ writeOut: (s) => { out += s; }, writeErr: (s) => { err += s; } });
  registerKeysCommand(program);
  try {
    await program.parseAsync(['keys', ...args], { from: 'user' });
    return { ok: true, out, err };
  } catch (e) {
    if ((e as { code?: string }).code === undefined || !String((e as { code: string }).code).startsWith('commander.') &&
        (e as { code: string }).code !== 'rrscan.keys') throw e;
    return { ok: false, out, err };
  }
}

async function add(...flags: string[]): Promise<string> {
  const r = await run('add', '--data', dir, ...flags);
  expect(r.err).toBe('');
  expect(r.ok).toBe(true);
  return r.out.trim();
}

function created(key: string): number {
  const store = SqliteKeyStore.open(dir);
  try {
    return store.record(hashKey(key))!.licence.created;
  } finally {
    store.close();
  }
}

async function admit(gate: AccessGate, apiKey: string, ip: string, endpoint: Endpoint): Promise<unknown> {
  return gate.charge(await gate.authenticate(apiKey, ip, endpoint), endpoint);
}

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-keys-cli-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('keys add', () => {
  it('prints a fresh 64-hex-digit key, stores only its hash, in a 0600 file', async () => {
    const r = await run('add', '--data', dir, '--daily', '1000');
    expect(r.out).toMatch(/^[0-9a-f]{64}\n$/);
    const key = r.out.trim();
    const file = path.join(dir, 'keys.sqlite');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`, { flag: 'a+' })]);
    expect(bytes.includes(Buffer.from(key))).toBe(false);
    expect(bytes.includes(hashKey(key))).toBe(true);
  });

  it('stores every flag, and show prints the licence and usage', async () => {
    const key = await add('--key', '0123-4567-89AB-CDEF-0123', '--block', '600', '--expires', '4102444800', '--results-max', '256',
      '--offset-max', '3000000', '--burst', '10', '--burst-window', '300', '--max-concurrent', '4',
      '--time-fence-after', '-86400', '--time-fence-before', '4000000000', '--private',
      '--allow-cidr', '10.0.0.0/8', '2001:db8::/32', '--allow-cidr', '192.0.2.7', '--no-v2');
    expect(key).toBe('0123-4567-89ab-cdef-0123');
    const t = created(key);
    const r = await run('show', '--data', dir, key);
    expect(r.out).toBe([
      'fingerprint: ' + hashKey(key).toString('hex').slice(0, 12),
      'status: active',
      `created: ${t} (${iso(t)})`,
      'quota: block 600',
      'expires: 4102444800 (2100-01-01T00:00:00Z)',
      'results_max: 256',
      'offset_max: 3000000',
      'burst: 10 per 300 s (lookup/summarize)',
      'max_concurrent: 4 per server process',
      'time_fence_after: -86400 (relative to each request)',
      'time_fence_before: 4000000000 (2096-10-02T07:06:40Z)',
      'private: yes',
      'allow_cidr: 10.0.0.0/8 2001:db8::/32 192.0.2.7',
      'v2: no',
      'used: 0 of 600 in the block',
      'total_used: 0',
      'last_used: n/a',
      'rate_limit: {"rate":{"reset":"n/a","expires":4102444800,"limit":600,"remaining":600,"results_max":256,' +
        '"offset_max":3000000,"burst_size":10,"burst_window":300}}',
      '',
    ].join('\n'));
  });

  it('shows the defaults of the hourly trial', async () => {
    const key = await add('--hourly', '12');
    const out = (await run('show', '--data', dir, key)).out;
    expect(out).toContain('\nquota: hourly 12\nexpires: n/a\nresults_max: 12\noffset_max: none (offsets refused)\nburst: none\n' +
      'max_concurrent: none\ntime_fence_after: none\ntime_fence_before: none\nprivate: no\nallow_cidr: any\nv2: yes\nused: 0 of 12 this hour, resets ');
  });

  it('refuses bad flags with clear errors and stores nothing', async () => {
    const bad = async (...flags: string[]) => {
      const r = await run('add', '--data', dir, ...flags);
      expect(r.ok, flags.join(' ')).toBe(false);
      expect(r.out).toBe('');
      return r.err.trim();
    };
    expect(await bad()).toBe('error: give exactly one quota kind: --daily N, --hourly N, --block N or --unlimited');
    expect(await bad('--daily', '5', '--unlimited')).toBe('error: give exactly one quota kind: --daily N, --hourly N, --block N or --unlimited');
    expect(await bad('--daily', 'x')).toBe("error: option '--daily <N>' argument 'x' is invalid. must be a positive integer.");
    expect(await bad('--daily', '-5')).toBe("error: option '--daily <N>' argument '-5' is invalid. must be a positive integer.");
    expect(await bad('--daily', '0')).toBe('error: --daily: must be a positive integer, got 0');
    expect(await bad('--block', '5', '--results-max', '2000000')).toBe('error: --results-max: must be at most 1000000, got 2000000');
    expect(await bad('--block', '5', '--burst', '5')).toBe('error: --burst N and --burst-window SECONDS go together');
    expect(await bad('--block', '5', '--burst-window', '5')).toBe('error: --burst N and --burst-window SECONDS go together');
    expect(await bad('--unlimited', '--allow-cidr', '10.0.0.0/40'))
      .toBe('error: --allow-cidr: "10.0.0.0/40": prefix length must be an integer from 0 to 32');
    expect(await bad('--unlimited', '--key', 'abc')).toBe('error: --key: must be 16 to 256 hex digits or dashes');
    expect(await bad('--unlimited', '--key', 'zzzzzzzzzzzzzzzzzzzz')).toBe('error: --key: must be 16 to 256 hex digits or dashes');
    expect(await bad('--unlimited', '--time-fence-after', '1.5'))
      .toBe("error: option '--time-fence-after <T>' argument '1.5' is invalid. must be epoch seconds or negative seconds relative to now.");
    expect(await bad('--unlimited', '--time-fence-after', '0'))
      .toBe('error: --time-fence-after: must be epoch seconds or negative seconds relative to now, got 0');
    const r = await run('add', '--daily', '5');
    expect(r.err.trim()).toBe('error: give --data DIR or --redis-url URL');
    expect((await run('list', '--data', dir)).err.trim()).toMatch(/^error: no key store in /);
  });

  it('refuses a key that exists', async () => {
    await add('--key', 'aaaaaaaaaaaaaaaa', '--unlimited');
    const r = await run('add', '--data', dir, '--key', 'AAAAAAAAAAAAAAAA', '--daily', '5');
    expect(r.err.trim()).toBe(`error: --key: a key with fingerprint ${hashKey('aaaaaaaaaaaaaaaa').toString('hex').slice(0, 12)} already exists`);
  });
});

describeEachKeyStore('keys list, revoke, reset', (store) => {
  /** Where the keys of this test live, as `rrscan keys` flags. */
  const where = (): string[] => (store.name === 'SQLite' ? ['--data', dir] : store.flags());

  beforeEach(() => store.empty());

  it('lists fingerprints only, with usage', async () => {
    const a = await add(...store.flags(), '--key', '1111111111111111', '--daily', '1000');
    const b = await add(...store.flags(), '--key', '2222222222222222', '--unlimited', '--expires', '1000000000');
    const gate = AccessGate.open(store.config(dir));
    for (let i = 0; i < 3; i++) await admit(gate, a, '192.0.2.1', 'lookup');
    gate.close();
    const out = (await run('list', ...where())).out;
    const fa = hashKey(a).toString('hex').slice(0, 12);
    const fb = hashKey(b).toString('hex').slice(0, 12);
    const rows = out.split('\n');
    expect(rows[0]).toBe('FINGERPRINT   STATUS   QUOTA       USED  TOTAL  EXPIRES');
    expect(rows.slice(1).sort()).toEqual([
      '',
      `${fa}  active   daily 1000  3     3      n/a`,
      `${fb}  expired  unlimited   -     0      1000000000`,
    ].sort());
    expect(out).not.toContain(a);
    expect(out).not.toContain(b);
  });

  it('says where a key\'s --max-concurrent is counted', async () => {
    const key = await add(...store.flags(), '--unlimited', '--max-concurrent', '3');
    const scope = store.name === 'SQLite' ? 'per server process' : 'across every server on this Redis';
    expect((await run('show', ...where(), key)).out).toContain(`\nmax_concurrent: 3 ${scope}\n`);
  });

  it('revokes a key (403 from then on) and resets usage', async () => {
    const key = await add(...store.flags(), '--block', '2');
    const fp = hashKey(key).toString('hex').slice(0, 12);
    const gate = AccessGate.open(store.config(dir), { licenceCacheTtlMs: 0 });
    try {
      await admit(gate, key, '192.0.2.1', 'lookup');
      await admit(gate, key, '192.0.2.1', 'lookup');
      await expect(admit(gate, key, '192.0.2.1', 'lookup')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
      expect((await run('show', ...where(), key)).out).toContain('\nused: 2 of 2 in the block\ntotal_used: 2\n');
      expect((await run('reset', ...where(), key)).out).toBe(`reset usage of ${fp}\n`);
      expect((await run('show', ...where(), key)).out).toContain('\nused: 0 of 2 in the block\ntotal_used: 0\nlast_used: n/a\n');
      await admit(gate, key, '192.0.2.1', 'lookup');
      expect((await run('revoke', ...where(), key)).out).toBe(`revoked ${fp}\n`);
      await expect(admit(gate, key, '192.0.2.1', 'flex')).rejects.toMatchObject({ code: 'BAD_API_KEY', status: 403 });
      expect((await run('show', ...where(), key)).out).toMatch(/\nstatus: revoked \d+ \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n/);
    } finally {
      gate.close();
    }
  });

});

describe('keys: no such key', () => {
  it('answers no such key, and refuses text that is not a key', async () => {
    await add('--unlimited');
    for (const cmd of ['show', 'revoke', 'reset']) {
      expect((await run(cmd, '--data', dir, 'ffffffffffffffffffff')).err.trim(), cmd).toBe('error: no such key');
      expect((await run(cmd, '--data', dir, 'short')).err.trim(), cmd).toBe('error: KEY must be 16 to 256 hex digits or dashes');
    }
  });
});
