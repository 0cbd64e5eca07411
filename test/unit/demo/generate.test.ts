import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { DEMO_EPOCH_START, DEMO_NOW_DEFAULT, demoObservations } from '../../../src/demo/generate.js';
import { normalizeName } from '../../../src/dns/name.js';
import { rdataFromText, rdataToText } from '../../../src/dns/rdata/index.js';
import { rrtypeToText } from '../../../src/dns/rrtype.js';
import { RrsetTable } from '../../../src/shard/rrset-table.js';
import type { Observation } from '../../../src/model/observation.js';

const N = 100_000;
const all: Observation[] = [...demoObservations({ records: N })];

function digest(obs: Iterable<Observation>): string {
  const h = createHash('sha256');
  for (const o of obs) {
    h.update(`${o.rrname} ${o.rrtype} ${o.bailiwick} ${o.count} ${o.timeFirst} ${o.timeLast} ${o.zoneTimeFirst} ${o.zoneTimeLast}`);
    for (const r of o.rdata) h.update(` ${r.text} ${Buffer.from(r.wire).toString('hex')}`);
    h.update('\n');
  }
  return h.digest('hex');
}

describe('demo dataset: determinism', () => {
  it('gives the same stream for the same arguments, and a smaller demo is a prefix of a larger one', () => {
    const first = digest(demoObservations({ records: 1000 }));
    expect(digest(demoObservations({ records: 1000 }))).toBe(first);
    expect(digest(all.slice(0, 1000))).toBe(first);
    expect(digest(demoObservations({ records: 1000, seed: 1, now: DEMO_NOW_DEFAULT }))).toBe(first);
    // A deliberate change to the generator or its vocabulary changes the demo data: update this value then.
    expect(first).toBe('83a45c4e20b896bc71987acb97bdbbdfd2e03bb2d606a80bad0b7b77fb7aad46');
  });

  it('gives another stream for another seed or another now', () => {
    const first = digest(all.slice(0, 1000));
    expect(digest(demoObservations({ records: 1000, seed: 2 }))).not.toBe(first);
    expect(digest(demoObservations({ records: 1000, now: DEMO_NOW_DEFAULT - 86_400 }))).not.toBe(first);
  });

  it('refuses a bad record count or now', () => {
    expect(() => [...demoObservations({ records: -1 })]).toThrow(RangeError);
    expect(() => [...demoObservations({ records: 1.5 })]).toThrow(RangeError);
    expect(() => [...demoObservations({ records: LIMITS.demoRecordsMax + 1 })]).toThrow(RangeError);
    expect(() => [...demoObservations({ records: 1, now: DEMO_EPOCH_START })]).toThrow(RangeError);
    expect([...demoObservations({ records: 0 })]).toEqual([]);
  });
});

describe('demo dataset: shape', () => {
  it('yields exactly `records` observations, each a distinct RRset', () => {
    expect(all).toHaveLength(N);
    const table = new RrsetTable();
    for (const o of all) table.add(o);
    expect(table.size).toBe(N);
  });

  it('covers A, AAAA, NS, MX, TXT, CNAME and SOA, and only those', () => {
    const mix = new Map<string, number>();
    for (const o of all) mix.set(rrtypeToText(o.rrtype), (mix.get(rrtypeToText(o.rrtype)) ?? 0) + 1);
    expect([...mix.keys()].sort()).toEqual(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT']);
    for (const [type, n] of mix) expect({ type, share: n / N > 0.03 }).toEqual({ type, share: true });
    expect(mix.get('A')! / N).toBeGreaterThan(0.25);
  });

  it('uses canonical names, bailiwicks that enclose the owner, canonical rdata and positive counts', () => {
    // Failures are collected rather than asserted one by one: 100,000 expect() calls take seconds.
    const bad: string[] = [];
    for (const o of all) {
      if (normalizeName(o.rrname) !== o.rrname) bad.push(`rrname ${o.rrname}`);
      if (normalizeName(o.bailiwick) !== o.bailiwick) bad.push(`bailiwick ${o.bailiwick}`);
      if (o.rrname !== o.bailiwick && !o.rrname.endsWith(`.${o.bailiwick}`)) bad.push(`${o.rrname} outside ${o.bailiwick}`);
      if (o.rdata.length === 0) bad.push(`${o.rrname} has no rdata`);
      if (!Number.isSafeInteger(o.count) || o.count < 1) bad.push(`${o.rrname} count ${o.count}`);
      for (const r of o.rdata) {
        if (rdataToText(o.rrtype, r.wire) !== r.text) bad.push(`${o.rrname} rdata text ${r.text}`);
        if (!Buffer.from(rdataFromText(o.rrtype, r.text)).equals(Buffer.from(r.wire))) bad.push(`${o.rrname} rdata wire ${r.text}`);
      }
    }
    expect(bad.slice(0, 10)).toEqual([]);
  });

  it('keeps every time between 2010-01-01 and now, first before last, with sensor and zone observations', () => {
    let zoneOnly = 0;
    let both = 0;
    let longest = 0;
    let earliest = Infinity;
    let latest = 0;
    const bad: string[] = [];
    for (const o of all) {
      if (o.timeFirst === 0 && o.zoneTimeFirst === 0) bad.push(`${o.rrname} has no times`);
      for (const [f, l] of [[o.timeFirst, o.timeLast], [o.zoneTimeFirst, o.zoneTimeLast]] as const) {
        if (f === 0 && l === 0) continue;
        if (!(f >= DEMO_EPOCH_START && f <= l && l <= DEMO_NOW_DEFAULT)) bad.push(`${o.rrname} ${f}..${l}`);
        longest = Math.max(longest, l - f);
        earliest = Math.min(earliest, f);
        latest = Math.max(latest, l);
      }
      if (o.timeFirst === 0) zoneOnly++;
      else if (o.zoneTimeFirst > 0) both++;
    }
    expect(bad.slice(0, 10)).toEqual([]);
    expect(zoneOnly).toBeGreaterThan(N / 100);
    expect(both).toBeGreaterThan(N / 100);
    expect(earliest).toBeLessThan(DEMO_EPOCH_START + 365 * 86_400);
    expect(latest).toBeGreaterThan(DEMO_NOW_DEFAULT - 7 * 86_400);
    expect(longest).toBeGreaterThan(12 * 365 * 86_400);
  });

  it('respects another now', () => {
    const now = Date.UTC(2020, 0, 1) / 1000;
    let latest = 0;
    for (const o of demoObservations({ records: 20_000, now })) latest = Math.max(latest, o.timeLast, o.zoneTimeLast);
    expect(latest).toBeLessThanOrEqual(now);
    expect(latest).toBeGreaterThan(now - 7 * 86_400);
  });
});

describe('demo dataset: something to search for', () => {
  const names = new Set(all.map((o) => o.rrname));

  it('holds the documented phishing lookalikes and more of their kind', () => {
    for (const n of ['paypal-login-verify.xyz.', 'secure-paypal.com.account-update.top.', 'appleid-support-login.com.',
      'microsoft-login.online.']) {
      expect({ n, present: names.has(n) }).toEqual({ n, present: true });
    }
    const paypal = [...names].filter((n) => n.includes('paypal'));
    const login = [...names].filter((n) => /.*-login\..*/.test(n));
    expect(paypal.length).toBeGreaterThan(10);
    expect(login.length).toBeGreaterThan(20);
  });

  it('holds long hash-like labels and IDN names', () => {
    expect([...names].filter((n) => /^[a-z0-9]{30,}\./.test(n)).length).toBeGreaterThan(50);
    expect([...names].filter((n) => n.startsWith('xn--') || n.includes('.xn--')).length).toBeGreaterThan(20);
  });

  it('puts many names on shared addresses and changes RRsets over time', () => {
    const byAddress = new Map<string, Set<string>>();
    const setsPerKey = new Map<string, number>();
    for (const o of all) {
      if (o.rrtype === 1) {
        for (const r of o.rdata) {
          let s = byAddress.get(r.text);
          if (s === undefined) byAddress.set(r.text, s = new Set());
          s.add(o.rrname);
        }
      }
      const key = `${o.rrname} ${o.rrtype} ${o.bailiwick}`;
      setsPerKey.set(key, (setsPerKey.get(key) ?? 0) + 1);
    }
    const shared = [...byAddress.values()].map((s) => s.size).sort((a, b) => b - a);
    expect(shared[0]).toBeGreaterThan(30);
    expect(shared.filter((n) => n >= 5).length).toBeGreaterThan(100);
    expect([...setsPerKey.values()].filter((n) => n >= 2).length).toBeGreaterThan(N / 50);
  });
});
