// The demo dataset: a deterministic, realistic stream of RRset observations
// that `npm start` and `rrscan demo` ingest when the data directory is empty.
//
// Contract. demoObservations({records, seed, now}) yields exactly `records`
// Observations, and the same arguments always give the same stream (a seeded
// xoshiro128** generator; Math.random is never used, and the stream does not
// depend on `records`, which only cuts it). Every Observation is meant to be
// a distinct RRset (names are claimed once, later periods never repeat an
// earlier rdata set), so ingesting N observations gives N RRsets; checked for
// the first 1 M. Names are canonical (lower case, trailing dot), rdata text is
// our canonical presentation and `wire` its uncompressed form, and every time
// lies in [2010-01-01, now]. Speed: 1 M RRsets (1.62 M records) in about 2 s
// of one core here; shared rdata (NS hosts, MX sets, SPF) is built once.
//
// What it looks like: registrable domains of words and syllables under a
// com-heavy TLD mix, each with SOA, NS (shared servers of a few dozen DNS
// providers), A/AAAA on apex and www from hosting providers' address blocks
// (shared-hosting pools put many domains on one address, so IP and CIDR
// lookups are interesting), MX and SPF/verification TXT matching the mail
// provider, and subdomains with A records or CNAMEs into CDNs. Some RRsets
// change over time (hosting moves, SOA serials, DNS provider switches, a TXT
// token added), NS delegations in gTLDs also come from zone files
// (zone_time_*, bailiwick the TLD), and a few domains publish their zone. A
// sprinkle of phishing lookalikes, DGA-style hash names and IDN (xn--) names
// gives flexible search something to find.

import { domainToASCII } from 'node:url';
import { LIMITS } from '../config/limits.js';
import { ipv6ToText } from '../dns/ip.js';
import { rdataFromText } from '../dns/rdata/index.js';
import { RR } from '../dns/rrtype.js';
import type { Observation, Rdata } from '../model/observation.js';
import { mix32, Prng } from './prng.js';
import {
  ABUSE_TLDS, BUSINESS_SUFFIXES, CNAME_TARGETS, DNS_PROVIDERS, HOSTING, IDN_NAMES, LOCAL_WORDS, MAIL_PROVIDERS,
  PHISH_BRANDS, PHISH_FIXED, PHISH_WORDS, SPF_EXTRAS, SUBDOMAINS, SYLLABLES, TLDS, VERIFY_TOKENS, WORDS,
  type CnameTarget, type DnsProvider, type HostingProvider, type MailProvider, type TldInfo,
} from './vocabulary.js';

export interface DemoOptions {
  /** Observations (= distinct RRsets) to yield; at most LIMITS.demoRecordsMax. */
  records: number;
  seed?: number;
  /** Epoch seconds of "now", the latest time_last; fixed by default so the data never changes. */
  now?: number;
}

/**
 * A record made from its text, whose wire form is parsed when first asked
 * for: the RRset table asks only for rdata it has not interned yet (most
 * demo records repeat one it has: shared hosts, name servers, SPF), and a
 * thread making one part of the data set (demo-part.ts) never asks for the
 * records of the other parts. The text is the generator's own and always
 * parses; a failure would be this file's bug.
 */
class TextRdata implements Rdata {
  private parsed: Uint8Array | undefined = undefined;

  constructor(private readonly rrtype: number, readonly text: string) {}

  get wire(): Uint8Array {
    return (this.parsed ??= rdataFromText(this.rrtype, this.text));
  }
}

/** 2010-01-01T00:00:00Z: the earliest time_first the demo uses. */
export const DEMO_EPOCH_START = 1_262_304_000;
/** 2026-11-01T00:00:00Z: the default `now`. */
export const DEMO_NOW_DEFAULT = 1_793_491_200;
export const DEMO_SEED_DEFAULT = 1;

const DAY = 86_400;
/** Counts are JSON integers to clients; keep them far from 2^53 and within signed 32 bits for old clients. */
const COUNT_MAX = 2_000_000_000;
/** Shared Rdata objects (NS hosts, MX sets, SPF texts) kept per rrtype for reuse; a cache is cleared when it grows past this. */
const RDATA_CACHE_MAX = 200_000;
/** Domains whose time_last lies within the last few days of `now`: they are alive. */
const ALIVE_SHARE = 0.8;

// ---------------------------------------------------------------------------
// Randomness

/** 32-bit integer mix (murmur3 finaliser): stable pseudo-random values from an index. */


/** Picks items by weight with a binary search over cumulative weights. */
class Weighted<T> {
  private readonly cumulative: Float64Array;
  private readonly total: number;
  constructor(readonly items: readonly T[], weight: (item: T) => number) {
    this.cumulative = new Float64Array(items.length);
    let sum = 0;
    for (let i = 0; i < items.length; i++) {
      sum += weight(items[i]!);
      this.cumulative[i] = sum;
    }
    this.total = sum;
  }

  pick(rng: Prng): T {
    const x = rng.float() * this.total;
    let lo = 0;
    let hi = this.items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo]!;
  }
}

const HEX = '0123456789abcdef';
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const CONSONANTS = 'bcdfghjklmnpqrstvwxz';
const VOWELS = 'aeiouy';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const tldTable = new Weighted(TLDS, (t) => t.weight);
const hostingTable = new Weighted(HOSTING, (h) => h.weight);
const dnsTable = new Weighted(DNS_PROVIDERS, (d) => d.weight);
const mailTable = new Weighted(MAIL_PROVIDERS, (m) => m.weight);
const cnameTable = new Weighted(CNAME_TARGETS.filter((c) => c.weight > 0), (c) => c.weight);
const hostingByName = new Map(HOSTING.map((h) => [h.name, h]));
const dnsByName = new Map(DNS_PROVIDERS.map((d) => [d.name, d]));
const zoneTlds = new Set(TLDS.filter((t) => t.zone).map((t) => t.suffix));
/** Cheap hosting that abuse domains favour. */
const ABUSE_HOSTING = ['cloudflare', 'namecheap', 'hostinger', 'contabo', 'vultr', 'selectel', 'alibaba', 'leaseweb', 'digitalocean', 'ovh']
  .map((n) => hostingByName.get(n)!);
const ABUSE_DNS = ['cloudflare', 'namecheap', 'regru', 'alidns', 'hostinger', 'dnspod'].map((n) => dnsByName.get(n)!);
const DGA_TLDS = ['com', 'net', 'info', 'biz', 'ru', 'cn', 'top', 'xyz', 'org', 'cc', 'ws', 'in'];
/** Shared-hosting addresses per provider and weight unit: cloudflare (weight 180) gets 11,520. */
const POOL_PER_WEIGHT = 64;

const MICROSOFT_CNAMES: Readonly<Record<string, string>> = {
  lyncdiscover: 'webdir.online.lync.com.',
  sip: 'sipdir.online.lync.com.',
  enterpriseregistration: 'enterpriseregistration.windows.net.',
  enterpriseenrollment: 'enterpriseenrollment.manage.microsoft.com.',
  autodiscover: 'autodiscover.outlook.com.',
};
const MAIL_LABELS = new Set(['mail', 'webmail', 'smtp', 'imap', 'pop', 'pop3', 'mx', 'relay', 'owa']);

// ---------------------------------------------------------------------------
// The world: one domain at a time, its RRsets pushed to `out`.

interface Domain {
  /** 'example.com.' */
  apex: string;
  /** 'example-com': how providers write the domain inside their host names. */
  dashed: string;
  /** The parent zone, e.g. 'com.' or 'co.uk.': bailiwick of the delegation. */
  zone: string;
  /** The parent zone's file reaches us (gTLDs): delegations get zone observations. */
  zoneFiles: boolean;
  /** The domain's own zone is published (open AXFR): its apex RRsets get zone times too. */
  zonePublished: boolean;
  born: number;
  died: number;
  /** Lookups per day relative to an ordinary domain; heavy-tailed. */
  pop: number;
  hosting: HostingProvider;
  /** Labels below the apex already used, so no RRset repeats. */
  labels: Set<string>;
  /** Apex IPv4 set of the first hosting period, reused for mail and self-hosted NS. */
  firstV4: number[];
}

class DemoWorld {
  private readonly rng: Prng;
  private readonly usedNames = new Set<string>();
  private readonly sharedTargetsDone = new Set<string>();
  /** Per rrtype: text -> Rdata, for values many domains share. */
  private readonly rdataCache = new Map<number, Map<string, Rdata>>();
  private domainIndex = 0;
  private fixedPhish = 0;

  constructor(seed: number, private readonly now: number) {
    this.rng = new Prng(seed);
  }

  /** Generates the next domain and pushes its RRsets to `out`. */
  nextDomain(out: Observation[]): void {
    const i = this.domainIndex++;
    const r = this.rng.float();
    // The fixed lookalikes come early and spread out, so a small demo has them all.
    if (i % 37 === 5 && this.fixedPhish < PHISH_FIXED.length) this.phishDomain(out, PHISH_FIXED[this.fixedPhish++]);
    else if (r < 0.015) this.dgaDomain(out);
    else if (r < 0.035) this.phishDomain(out, undefined);
    else if (r < 0.04) this.idnDomain(out);
    else this.normalDomain(out);
  }

  // ---- names ----

  private claim(name: string): boolean {
    if (this.usedNames.has(name)) return false;
    this.usedNames.add(name);
    return true;
  }

  private syllables(min: number, max: number): string {
    const n = min + this.rng.below(max - min + 1);
    let s = '';
    for (let i = 0; i < n; i++) s += this.rng.pick(SYLLABLES);
    return s;
  }

  /** A brandable second-level label. */
  private brandLabel(tld: TldInfo): string {
    const rng = this.rng;
    const local = tld.local ? LOCAL_WORDS[tld.local] : undefined;
    if (local && rng.chance(0.4)) {
      const w = rng.pick(local);
      const r = rng.float();
      if (r < 0.3) return w;
      if (r < 0.6) return `${w}-${rng.pick(local)}`;
      if (r < 0.8) return `${rng.pick(WORDS)}${w}`;
      return `${w}${rng.pick(BUSINESS_SUFFIXES)}`;
    }
    const r = rng.float();
    if (r < 0.28) return `${rng.pick(WORDS)}${rng.pick(WORDS)}`;
    if (r < 0.38) return `${rng.pick(WORDS)}-${rng.pick(WORDS)}`;
    if (r < 0.58) return this.syllables(2, 4);
    if (r < 0.72) return `${rng.pick(WORDS)}${rng.pick(BUSINESS_SUFFIXES)}`;
    if (r < 0.78) return `${this.syllables(2, 3)}${rng.pick(BUSINESS_SUFFIXES)}`;
    if (r < 0.83) return `${rng.pick(WORDS)}${1 + rng.below(rng.chance(0.5) ? 9 : 999)}`;
    if (r < 0.88) return `${rng.text(2 + rng.below(3), 'abcdefghijklmnopqrstuvwxyz')}-${rng.pick(BUSINESS_SUFFIXES)}`;
    if (r < 0.93) return `${rng.pick(WORDS)}${rng.pick(WORDS)}${rng.pick(WORDS)}`;
    if (r < 0.97) return `${this.syllables(2, 3)}-${rng.pick(WORDS)}`;
    return `the${rng.pick(WORDS)}${rng.pick(BUSINESS_SUFFIXES)}`;
  }

  /** Claims a new registrable name under `suffix`; retries, then falls back to a numbered name. */
  private registrable(label: () => string, suffix: string): string {
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = `${label()}.${suffix}.`;
      if (this.claim(name)) return name;
    }
    for (;;) {
      const name = `${label()}${this.rng.below(100_000)}.${suffix}.`;
      if (this.claim(name)) return name;
    }
  }

  private randomHostLabel(): string {
    const rng = this.rng;
    const n = rng.below(1000);
    switch (rng.below(8)) {
      case 0: return `srv-${String(n).padStart(3, '0')}`;
      case 1: return `web${String(n % 100).padStart(2, '0')}`;
      case 2: return `host${n}`;
      case 3: return `node-${n % 64}`;
      case 4: return `vps${n}`;
      case 5: return rng.text(8 + rng.below(8), HEX);
      case 6: {
        const site = rng.pick(['fra', 'ams', 'lon', 'nyc', 'sfo', 'sin', 'tok', 'syd', 'par', 'waw']);
        return `${site}${1 + (n % 9)}-${rng.pick(['app', 'web', 'db', 'lb', 'edge', 'cache'])}`;
      }
      default: return `${rng.pick(WORDS)}${n % 10}`;
    }
  }

  // ---- rdata ----

  private a(ip: number): Rdata {
    const wire = new Uint8Array(4);
    wire[0] = ip >>> 24;
    wire[1] = (ip >>> 16) & 255;
    wire[2] = (ip >>> 8) & 255;
    wire[3] = ip & 255;
    return { text: `${wire[0]}.${wire[1]}.${wire[2]}.${wire[3]}`, wire };
  }

  private aaaa(wire: Uint8Array): Rdata {
    return { text: ipv6ToText(wire), wire };
  }

  /** Rdata of any other type from canonical text; `shared` values are cached and reused. */
  private rd(rrtype: number, text: string, shared = false): Rdata {
    if (!shared) return new TextRdata(rrtype, text);
    let cache = this.rdataCache.get(rrtype);
    if (cache === undefined) this.rdataCache.set(rrtype, cache = new Map());
    let r = cache.get(text);
    if (r === undefined) {
      if (cache.size >= RDATA_CACHE_MAX) cache.clear();
      r = new TextRdata(rrtype, text);
      cache.set(text, r);
    }
    return r;
  }

  private static quoted(s: string): string {
    return `"${s}"`;
  }

  // ---- addresses ----

  /** An IPv4 address of `h`: often one of its shared-hosting pool (many domains per address), else anywhere in its blocks. */
  private pickV4(h: HostingProvider): number {
    const rng = this.rng;
    let a: number, b: number, c: number, d: number;
    if (rng.chance(0.6)) {
      const idx = rng.skewed(h.weight * POOL_PER_WEIGHT, 3);
      const x = mix32((HOSTING.indexOf(h) << 20) ^ idx ^ 0x5bd1e995);
      [a, b] = h.v4[x % h.v4.length]!;
      c = (x >>> 8) & 255;
      d = 1 + ((x >>> 16) % 254);
    } else {
      [a, b] = rng.pick(h.v4);
      c = rng.below(256);
      d = 1 + rng.below(254);
    }
    return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  }

  private pickV6(h: HostingProvider): Uint8Array {
    const rng = this.rng;
    const w = new Uint8Array(16);
    const shared = rng.chance(0.5);
    const x = shared ? mix32((HOSTING.indexOf(h) << 20) ^ rng.skewed(h.weight * POOL_PER_WEIGHT, 3) ^ 0x2545f491) : rng.u32();
    const [p0, p1] = shared ? h.v6[x % h.v6.length]! : rng.pick(h.v6);
    w[0] = p0 >> 8; w[1] = p0 & 255; w[2] = p1 >> 8; w[3] = p1 & 255;
    if (shared) {
      // Provider style: a small subnet number, then the host in the last 32 bits ("2606:4700:3031::6815:2a1c").
      w[4] = (x >>> 24) & 0x0f; w[5] = (x >>> 16) & 255;
      const y = mix32(x);
      w[12] = y >>> 24; w[13] = (y >>> 16) & 255; w[14] = (y >>> 8) & 255; w[15] = y & 255;
    } else {
      // A VM's address: subnet and a random interface identifier.
      for (let i = 4; i < 8; i++) w[i] = rng.below(256);
      if (rng.chance(0.5)) w[15] = 1 + rng.below(255);
      else for (let i = 8; i < 16; i++) w[i] = rng.below(256);
    }
    return w;
  }

  private v4Set(h: HostingProvider): number[] {
    const n = h.name === 'cloudflare' ? 2 : this.rng.chance(0.85) ? 1 : 2 + this.rng.below(3);
    const ips: number[] = [];
    while (ips.length < n) {
      const ip = this.pickV4(h);
      if (!ips.includes(ip)) ips.push(ip);
    }
    return ips;
  }

  // ---- times and counts ----

  /** Splits [a, b] into k consecutive periods with short gaps between them; returns [a0, b0, a1, b1, ...]. */
  private periods(a: number, b: number, k: number): number[] {
    if (k <= 1 || b - a < 8 * DAY * k) return [a, b];
    const cuts: number[] = [];
    for (let i = 1; i < k; i++) cuts.push(a + this.rng.below(b - a));
    cuts.sort((x, y) => x - y);
    const out: number[] = [];
    let lo = a;
    for (const c of cuts) {
      const hi = Math.max(lo, c);
      out.push(lo, hi);
      lo = Math.min(b, hi + this.rng.below(2 * DAY));
    }
    out.push(lo, b);
    return out;
  }

  private count(d: Domain, first: number, last: number, ratePerDay: number): number {
    const days = Math.max(last - first, 3600) / DAY;
    const c = Math.round(d.pop * ratePerDay * days * (0.3 + 1.4 * this.rng.float()));
    return c < 1 ? 1 : c > COUNT_MAX ? COUNT_MAX : c;
  }

  /** Sensor observation of an RRset over [a, b]: first and last sightings fall a little inside the period. */
  private sensor(out: Observation[], d: Domain, rrname: string, rrtype: number, bailiwick: string, rdata: Rdata[],
    a: number, b: number, ratePerDay: number, zone = false): void {
    const span = b - a;
    const tf = a + this.rng.below(Math.min(span, DAY / 2) + 1);
    const tl = b - this.rng.below(Math.min(b - tf, DAY / 2) + 1);
    const o: Observation = {
      rrname, rrtype, bailiwick, rdata, count: this.count(d, tf, tl, ratePerDay),
      timeFirst: tf, timeLast: tl, zoneTimeFirst: 0, zoneTimeLast: 0,
    };
    if (zone) this.addZoneTimes(o, a, b);
    out.push(o);
  }

  /** Zone-file times: daily snapshots, so whole days; count grows by one per snapshot. */
  private addZoneTimes(o: Observation, a: number, b: number): void {
    const first = Math.ceil(a / DAY) * DAY + 3600;
    const last = Math.max(first, Math.floor(b / DAY) * DAY + 3600);
    o.zoneTimeFirst = Math.min(first, this.now);
    o.zoneTimeLast = Math.min(last, this.now);
    o.count += 1 + Math.floor((o.zoneTimeLast - o.zoneTimeFirst) / DAY);
    if (o.count > COUNT_MAX) o.count = COUNT_MAX;
  }

  /** A zone-file-only observation (never seen by a sensor). */
  private zoneOnly(out: Observation[], rrname: string, rrtype: number, bailiwick: string, rdata: Rdata[], a: number, b: number): void {
    const o: Observation = { rrname, rrtype, bailiwick, rdata, count: 0, timeFirst: 0, timeLast: 0, zoneTimeFirst: 0, zoneTimeLast: 0 };
    this.addZoneTimes(o, a, b);
    out.push(o);
  }

  private lifetime(kind: 'normal' | 'phish' | 'dga'): [number, number] {
    const rng = this.rng;
    const now = this.now;
    if (kind === 'normal') {
      // More domains are registered every year: time_first density grows linearly.
      const born = DEMO_EPOCH_START + Math.floor((now - DEMO_EPOCH_START - 7 * DAY) * Math.sqrt(rng.float()));
      if (rng.chance(ALIVE_SHARE)) return [born, now - rng.below(3 * DAY)];
      const life = Math.floor(30 * DAY * rng.pareto(0.8));
      return [born, Math.min(now - 3 * DAY, born + life)];
    }
    const earliest = DEMO_EPOCH_START + (kind === 'phish' ? 6 : 2) * 365 * DAY;
    const born = earliest + rng.below(now - earliest - 2 * DAY);
    const life = kind === 'phish' ? DAY + rng.below(45 * DAY) : 3600 * (6 + rng.below(10 * 24));
    return [born, Math.min(now, born + life)];
  }

  private newDomain(apex: string, zone: string, kind: 'normal' | 'phish' | 'dga', hosting: HostingProvider): Domain {
    const [born, died] = this.lifetime(kind);
    const dashed = apex.slice(0, -1).replace(/\./g, '-');
    const pop = kind === 'normal' ? Math.min(200_000, this.rng.pareto(1.1)) : 0.2 + this.rng.float();
    return {
      apex, dashed, zone, zoneFiles: zoneTlds.has(zone.slice(0, -1)), zonePublished: kind === 'normal' && this.rng.chance(0.02),
      born, died, pop, hosting, labels: new Set(), firstV4: [],
    };
  }

  // ---- domain kinds ----

  private normalDomain(out: Observation[]): void {
    const tld = tldTable.pick(this.rng);
    const apex = this.registrable(() => this.brandLabel(tld), tld.suffix);
    const d = this.newDomain(apex, `${tld.suffix}.`, 'normal', hostingTable.pick(this.rng));
    this.fullDomain(out, d, this.rng.chance(0.04) ? undefined : dnsTable.pick(this.rng));
  }

  private idnDomain(out: Observation[]): void {
    const rng = this.rng;
    const [word, tld] = rng.pick(IDN_NAMES);
    let apex = '';
    for (let attempt = 0; attempt < 8 && apex === ''; attempt++) {
      const u = attempt === 0 ? word : rng.chance(0.5) ? `${word}${rng.pick(WORDS)}` : `${rng.pick(WORDS)}-${word}`;
      const ascii = domainToASCII(`${u}.${tld}`);
      if (ascii !== '' && this.claim(`${ascii}.`)) apex = `${ascii}.`;
    }
    if (apex === '') {
      this.normalDomain(out);
      return;
    }
    const zone = apex.slice(apex.indexOf('.') + 1);
    const d = this.newDomain(apex, zone, 'normal', hostingTable.pick(rng));
    this.fullDomain(out, d, dnsTable.pick(rng));
  }

  private dgaDomain(out: Observation[]): void {
    const rng = this.rng;
    const tld = rng.pick(DGA_TLDS);
    const label = (): string => {
      if (rng.chance(0.5)) return rng.text(30 + rng.below(11), ALNUM);
      let s = '';
      const n = 12 + rng.below(13);
      for (let i = 0; i < n; i++) s += rng.chance(0.7) ? CONSONANTS[rng.below(CONSONANTS.length)] : VOWELS[rng.below(VOWELS.length)];
      return s;
    };
    const apex = this.registrable(label, tld);
    const d = this.newDomain(apex, `${tld}.`, 'dga', rng.pick(ABUSE_HOSTING));
    this.delegation(out, d, rng.pick(ABUSE_DNS));
    const ips = this.v4Set(d.hosting);
    this.sensor(out, d, apex, RR.A, apex, ips.map((ip) => this.a(ip)), d.born, d.died, 5);
    if (rng.chance(0.3)) this.sensor(out, d, `www.${apex}`, RR.A, apex, ips.map((ip) => this.a(ip)), d.born, d.died, 1);
  }

  /** A phishing lookalike: `fixed` is one of PHISH_FIXED, else one is invented. */
  private phishDomain(out: Observation[], fixed: string | undefined): void {
    const rng = this.rng;
    let apex: string;
    let host = '';
    if (fixed !== undefined) {
      const labels = fixed.split('.');
      apex = `${labels.slice(-2).join('.')}.`;
      host = labels.slice(0, -2).join('.');
      if (!this.claim(apex)) return;
    } else {
      const tld = rng.pick(ABUSE_TLDS);
      const brand = rng.pick(PHISH_BRANDS);
      const w = (): string => rng.pick(PHISH_WORDS);
      const form = rng.below(6);
      if (form === 5) {
        // The brand's real name as leading labels of a throw-away domain: secure-paypal.com.account-update.top.
        apex = this.registrable(() => `${w()}-${w()}`, tld);
        host = `${rng.chance(0.5) ? `${w()}-` : ''}${brand}.com`;
      } else {
        apex = this.registrable(() => [
          `${brand}-${w()}-${w()}`, `${w()}-${brand}-${w()}`, `${brand}-${w()}`, `${brand}${w()}${rng.below(100)}`,
          `${w()}-${brand}`,
        ][form]!, tld);
      }
    }
    const zone = apex.slice(apex.indexOf('.') + 1);
    const d = this.newDomain(apex, zone, 'phish', rng.pick(ABUSE_HOSTING));
    this.delegation(out, d, rng.pick(ABUSE_DNS));
    const ips = this.v4Set(d.hosting);
    const a = ips.map((ip) => this.a(ip));
    this.sensor(out, d, apex, RR.A, apex, a, d.born, d.died, 3);
    if (host !== '') {
      d.labels.add(host);
      this.sensor(out, d, `${host}.${apex}`, RR.A, apex, a, d.born, d.died, 20);
    }
    if (rng.chance(0.6)) this.sensor(out, d, `www.${apex}`, RR.A, apex, a, d.born, d.died, 2);
    const subs = rng.below(3);
    for (let i = 0; i < subs; i++) {
      const label = rng.pick(PHISH_WORDS);
      if (d.labels.has(label) || label === 'www') continue;
      d.labels.add(label);
      this.sensor(out, d, `${label}.${apex}`, RR.A, apex, a, d.born, d.died, 4);
    }
    if (rng.chance(0.15)) this.sensor(out, d, apex, RR.TXT, apex, [this.rd(RR.TXT, '"v=spf1 -all"', true)], d.born, d.died, 0.5);
  }

  // ---- RRsets of one domain ----

  /** NS (at the apex and in the parent zone) and SOA; `dns` undefined means self-hosted nameservers. */
  private delegation(out: Observation[], d: Domain, dns: DnsProvider | undefined): void {
    const rng = this.rng;
    const apex = d.apex;
    // A switch of DNS provider gives a second, different NS set.
    const providers: (DnsProvider | undefined)[] = [dns];
    if (dns !== undefined && rng.chance(0.12)) {
      let other = dnsTable.pick(rng);
      while (other === dns) other = dnsTable.pick(rng);
      providers.unshift(other);
    }
    const spans = this.periods(d.born, d.died, providers.length);
    for (let p = 0; p < spans.length / 2; p++) {
      const a = spans[2 * p]!;
      const b = spans[2 * p + 1]!;
      const prov = providers[p]!;
      const hosts: string[] = [];
      if (prov === undefined) {
        hosts.push(`ns1.${apex}`, `ns2.${apex}`);
        d.labels.add('ns1').add('ns2');
        if (d.firstV4.length === 0) d.firstV4 = this.v4Set(d.hosting);
        const glue1 = [this.a(d.firstV4[0]!)];
        const glue2 = [this.a(this.pickV4(d.hosting))];
        this.sensor(out, d, hosts[0]!, RR.A, apex, glue1, a, b, 0.5, d.zonePublished);
        this.sensor(out, d, hosts[1]!, RR.A, apex, glue2, a, b, 0.5, d.zonePublished);
        // Glue in the parent zone.
        if (d.zoneFiles) {
          this.zoneOnly(out, hosts[0]!, RR.A, d.zone, glue1, a, b);
          this.zoneOnly(out, hosts[1]!, RR.A, d.zone, glue2, a, b);
        }
      } else {
        const r = rng.u32() >>> 1;
        for (let k = 0; k < prov.nsCount; k++) hosts.push(`${prov.hosts(k, r)}.`);
      }
      const ns = hosts.map((h) => this.rd(RR.NS, h, prov !== undefined));
      this.sensor(out, d, apex, RR.NS, apex, ns, a, b, 0.3, d.zonePublished);
      // The delegation as the parent zone's servers give it in referrals, and in the zone file for gTLDs.
      if (d.zoneFiles) {
        if (rng.chance(0.5)) this.sensor(out, d, apex, RR.NS, d.zone, ns, a, b, 0.2, true);
        else this.zoneOnly(out, apex, RR.NS, d.zone, ns, a, b);
      } else if (rng.chance(0.6)) {
        this.sensor(out, d, apex, RR.NS, d.zone, ns, a, b, 0.2);
      }
      this.soa(out, d, prov, hosts[0]!, a, b);
    }
  }

  /** SOA versions over [a, b]: the serial changes as the zone is edited. */
  private soa(out: Observation[], d: Domain, prov: DnsProvider | undefined, mname: string, a: number, b: number): void {
    const rng = this.rng;
    const style = prov?.serial ?? 'date';
    const versions = style === 'counter' ? 1 : rng.chance(0.6) ? 1 : rng.chance(0.75) ? 2 : 3;
    const rname = prov === undefined || prov.rname === '' ? `hostmaster.${d.apex}` : `${prov.rname}.`;
    const timers = prov?.timers ?? '3600 900 604800 86400';
    const spans = this.periods(a, b, versions);
    let lastSerial = 0;
    for (let v = 0; v < spans.length / 2; v++) {
      const t = spans[2 * v]!;
      let serial: number;
      if (style === 'counter') serial = 1;
      else if (style === 'epoch') serial = t + rng.below(DAY);
      else {
        const date = new Date(t * 1000);
        serial = (date.getUTCFullYear() * 10_000 + (date.getUTCMonth() + 1) * 100 + date.getUTCDate()) * 100 + rng.below(5);
      }
      if (serial <= lastSerial) serial = lastSerial + 1;
      lastSerial = serial;
      const text = `${mname} ${rname} ${serial} ${timers}`;
      this.sensor(out, d, d.apex, RR.SOA, d.apex, [this.rd(RR.SOA, text)], t, spans[2 * v + 1]!, 0.05, d.zonePublished);
    }
  }

  /** Everything an ordinary domain has: delegation, web hosting with history, www, mail, TXT, subdomains. */
  private fullDomain(out: Observation[], d: Domain, dns: DnsProvider | undefined): void {
    const rng = this.rng;
    const apex = d.apex;
    this.delegation(out, d, dns);

    // Web hosting periods: a site moves between addresses and sometimes providers.
    const moves = rng.chance(0.65) ? 1 : rng.chance(0.7) ? 2 : 3;
    const spans = this.periods(d.born, d.died, moves);
    const wwwMode = rng.float();
    // Earlier periods' sets, by first address: moving back to an old set would repeat an RRset.
    const usedV4: number[] = [];
    const usedV6: string[] = [];
    for (let p = 0; p < spans.length / 2; p++) {
      const a = spans[2 * p]!;
      const b = spans[2 * p + 1]!;
      const h = p === 0 ? d.hosting : rng.chance(0.4) ? hostingTable.pick(rng) : d.hosting;
      let ips = this.v4Set(h);
      while (usedV4.includes(ips[0]!)) ips = this.v4Set(h);
      usedV4.push(ips[0]!);
      if (p === 0 && d.firstV4.length === 0) d.firstV4 = ips;
      const v4 = ips.map((ip) => this.a(ip));
      const v6 = rng.chance(h.v6Share) ? Array.from({ length: h.name === 'cloudflare' ? 2 : 1 }, () => this.aaaa(this.pickV6(h))) : [];
      if (v6.length === 2 && v6[0]!.text === v6[1]!.text) v6.pop();
      // Pool addresses repeat: a later period must not publish the same AAAA set again.
      if (v6.length > 0 && usedV6.includes(v6[0]!.text)) v6.length = 0;
      if (v6.length > 0) usedV6.push(v6[0]!.text);
      this.sensor(out, d, apex, RR.A, apex, v4, a, b, 2, d.zonePublished);
      if (v6.length > 0) this.sensor(out, d, apex, RR.AAAA, apex, v6, a, b, 0.8, d.zonePublished);
      if (wwwMode < 0.55) {
        this.sensor(out, d, `www.${apex}`, RR.A, apex, v4, a, b, 3);
        if (v6.length > 0) this.sensor(out, d, `www.${apex}`, RR.AAAA, apex, v6, a, b, 1);
      }
    }
    d.labels.add('www');
    if (wwwMode >= 0.55 && wwwMode < 0.85) {
      const target = rng.chance(0.6) ? apex : this.cdnTarget(out, d, 'www');
      this.sensor(out, d, `www.${apex}`, RR.CNAME, apex, [this.rd(RR.CNAME, target)], d.born, d.died, 3);
    }

    const mail = rng.chance(0.75) ? this.mail(out, d) : undefined;
    this.txt(out, d, mail);
    this.subdomains(out, d, mail);
  }

  /** MX with the mail provider's hosts (and the domain's own mail hosts' A records); returns the provider. */
  private mail(out: Observation[], d: Domain): MailProvider {
    const rng = this.rng;
    const providers = [mailTable.pick(rng)];
    if (rng.chance(0.12)) {
      let other = mailTable.pick(rng);
      while (other.name === providers[0]!.name) other = mailTable.pick(rng);
      providers.unshift(other);
    }
    const spans = this.periods(d.born, d.died, providers.length);
    const tenant = 1000 + rng.below(9000);
    for (let p = 0; p < spans.length / 2; p++) {
      const a = spans[2 * p]!;
      const b = spans[2 * p + 1]!;
      const m = providers[p]!;
      const own = m.mx[0]!.includes('{n}');
      const mx = m.mx.map((t) => {
        const text = t.replace('{n}', d.apex).replace('{d}', d.dashed).replace('{r}', String(tenant));
        return this.rd(RR.MX, text, !own && !t.includes('{'));
      });
      this.sensor(out, d, d.apex, RR.MX, d.apex, mx, a, b, 0.4, d.zonePublished);
      if (own) {
        for (const t of m.mx) {
          const host = t.slice(t.indexOf(' ') + 1).replace('.{n}', '');
          if (d.labels.has(host)) continue;
          d.labels.add(host);
          const ip = d.firstV4.length > 0 && rng.chance(0.5) ? d.firstV4[0]! : this.pickV4(d.hosting);
          this.sensor(out, d, `${host}.${d.apex}`, RR.A, d.apex, [this.a(ip)], a, d.died, 0.3);
        }
      }
    }
    return providers[providers.length - 1]!;
  }

  private txt(out: Observation[], d: Domain, mail: MailProvider | undefined): void {
    const rng = this.rng;
    const strings: string[] = [];
    if (mail !== undefined && rng.chance(0.8)) {
      let spf = `v=spf1 ${mail.spf}`;
      if (rng.chance(0.3)) spf += ` ${rng.pick(SPF_EXTRAS)}`;
      if (mail.spf.startsWith('mx') && d.firstV4.length > 0 && rng.chance(0.5)) spf += ` ip4:${this.a(d.firstV4[0]!).text}`;
      spf += rng.chance(0.6) ? ' ~all' : ' -all';
      strings.push(spf);
    } else if (mail === undefined && rng.chance(0.25)) {
      strings.push('v=spf1 -all');
    }
    let tokens = rng.chance(0.45) ? 1 + rng.below(3) : 0;
    while (tokens-- > 0) {
      const [prefix, len, alphabet] = rng.pick(VERIFY_TOKENS);
      strings.push(prefix + rng.text(len, alphabet));
    }
    if (strings.length > 0) {
      const added = rng.chance(0.3);
      const spans = added ? this.periods(d.born, d.died, 2) : [d.born, d.died];
      const rdata = strings.map((s) => this.rd(RR.TXT, DemoWorld.quoted(s), s.startsWith('v=spf1')));
      this.sensor(out, d, d.apex, RR.TXT, d.apex, rdata, spans[0]!, spans[1]!, 0.1, d.zonePublished);
      if (spans.length === 4) {
        // A verification token added later: the TXT RRset changes.
        const [prefix, len, alphabet] = rng.pick(VERIFY_TOKENS);
        const more = [...rdata, this.rd(RR.TXT, DemoWorld.quoted(prefix + rng.text(len, alphabet)))];
        this.sensor(out, d, d.apex, RR.TXT, d.apex, more, spans[2]!, spans[3]!, 0.1, d.zonePublished);
      }
    }
    if (mail !== undefined && rng.chance(0.35)) {
      d.labels.add('_dmarc');
      const policy = rng.pick(['none', 'none', 'quarantine', 'reject']);
      const text = `v=DMARC1; p=${policy}; rua=mailto:dmarc@${d.apex.slice(0, -1)}`;
      const a = d.born + rng.below(Math.max(1, d.died - d.born));
      this.sensor(out, d, `_dmarc.${d.apex}`, RR.TXT, d.apex, [this.rd(RR.TXT, DemoWorld.quoted(text))], a, d.died, 0.05);
    }
  }

  /** A CNAME target in a CDN or SaaS platform; sometimes also emits the target's own A RRset. */
  private cdnTarget(out: Observation[], d: Domain, label: string, t: CnameTarget = cnameTable.pick(this.rng)): string {
    const rng = this.rng;
    const target = `${t.pattern.replace(/\{(h\d+|d|l)\}/g, (_m, k: string) => {
      if (k === 'd') return d.dashed.slice(0, 40);
      if (k === 'l') return label.replace(/[^a-z0-9-]/g, '-').slice(0, 20);
      return rng.text(Number(k.slice(1)), k === 'h14' ? ALNUM : HEX);
    })}.`;
    const unique = t.pattern.includes('{');
    const first = unique ? !d.labels.has(`>${target}`) : !this.sharedTargetsDone.has(target);
    if (first && (!unique || rng.chance(0.5))) {
      if (unique) d.labels.add(`>${target}`);
      else this.sharedTargetsDone.add(target);
      const h = hostingByName.get(t.hosting) ?? d.hosting;
      const ips = this.v4Set(h).map((ip) => this.a(ip));
      this.sensor(out, d, target, RR.A, t.zone + '.', ips, d.born, d.died, unique ? 2 : 50);
    }
    return target;
  }

  private subdomains(out: Observation[], d: Domain, mail: MailProvider | undefined): void {
    const rng = this.rng;
    const n = Math.min(40, Math.floor(-Math.log(1 - rng.float()) * 2 + Math.log10(d.pop) * 2.5));
    const microsoft = mail?.name === 'microsoft';
    for (let i = 0; i < n; i++) {
      const label = rng.chance(0.82) ? SUBDOMAINS[rng.skewed(SUBDOMAINS.length, 2)]! : this.randomHostLabel();
      if (d.labels.has(label)) continue;
      d.labels.add(label);
      const name = `${label}.${d.apex}`;
      const a = d.born + rng.below(Math.max(1, Math.floor((d.died - d.born) * 0.7)));
      const b = rng.chance(0.85) ? d.died : a + rng.below(d.died - a + 1);
      if (MICROSOFT_CNAMES[label] !== undefined && (microsoft || label === 'autodiscover')) {
        const target = microsoft ? MICROSOFT_CNAMES[label] : `mail.${d.apex}`;
        this.sensor(out, d, name, RR.CNAME, d.apex, [this.rd(RR.CNAME, target, true)], a, b, 0.5);
      } else if (label.endsWith('._domainkey')) {
        if (microsoft && label.startsWith('selector')) {
          const target = `${label.slice(0, label.indexOf('.'))}-${d.dashed}._domainkey.${d.dashed.slice(0, 20)}.onmicrosoft.com.`;
          this.sensor(out, d, name, RR.CNAME, d.apex, [this.rd(RR.CNAME, target)], a, b, 0.2);
        } else {
          const dkim = `v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ${rng.text(172, BASE64)}`;
          this.sensor(out, d, name, RR.TXT, d.apex, [this.rd(RR.TXT, DemoWorld.quoted(dkim))], a, b, 0.2);
        }
      } else if (MAIL_LABELS.has(label)) {
        this.sensor(out, d, name, RR.A, d.apex, [this.a(this.pickV4(d.hosting))], a, b, 0.4);
      } else {
        const r = rng.float();
        if (r < 0.62) {
          const h = rng.chance(0.7) ? d.hosting : hostingTable.pick(rng);
          const spans = this.periods(a, b, rng.chance(0.8) ? 1 : 2);
          let prev = -1;
          for (let p = 0; p < spans.length / 2; p++) {
            let ips = this.v4Set(h);
            while (ips[0] === prev) ips = this.v4Set(h);
            prev = ips[0]!;
            this.sensor(out, d, name, RR.A, d.apex, ips.map((ip) => this.a(ip)), spans[2 * p]!, spans[2 * p + 1]!, 0.5);
          }
          if (rng.chance(h.v6Share * 0.6)) this.sensor(out, d, name, RR.AAAA, d.apex, [this.aaaa(this.pickV6(h))], a, b, 0.2);
        } else {
          const target = rng.chance(0.25) ? d.apex : this.cdnTarget(out, d, label);
          this.sensor(out, d, name, RR.CNAME, d.apex, [this.rd(RR.CNAME, target, target.length < 40)], a, b, 0.8);
        }
      }
    }
    // Certificate validation records: long hex labels, as DCV and ACM leave them behind.
    if (rng.chance(0.06)) {
      const label = `_${rng.text(32, HEX)}`;
      const acm = rng.chance(0.5);
      const target = acm ? `_${rng.text(32, HEX)}.${rng.text(10, ALNUM)}.acm-validations.aws.`
        : `${rng.text(32, HEX)}.${rng.text(32, HEX)}.${rng.text(16, HEX)}.sectigo.com.`;
      const a = d.born + rng.below(Math.max(1, d.died - d.born));
      this.sensor(out, d, `${label}.${d.apex}`, RR.CNAME, d.apex, [this.rd(RR.CNAME, target)], a, d.died, 0.05);
    }
  }
}

/**
 * The demo dataset as a stream of Observations: exactly `opts.records` of
 * them, each a distinct RRset, deterministic for (seed, now); `records` only
 * cuts the stream, so a smaller demo is a prefix of a larger one.
 */
export function* demoObservations(opts: DemoOptions): Generator<Observation, void, undefined> {
  const { records } = opts;
  if (!Number.isSafeInteger(records) || records < 0 || records > LIMITS.demoRecordsMax) {
    throw new RangeError(`demo records must be an integer from 0 to ${LIMITS.demoRecordsMax}, got ${records}`);
  }
  const now = opts.now ?? DEMO_NOW_DEFAULT;
  if (!Number.isSafeInteger(now) || now < DEMO_EPOCH_START + 365 * DAY) {
    throw new RangeError(`demo now must be epoch seconds after ${DEMO_EPOCH_START + 365 * DAY}, got ${now}`);
  }
  const world = new DemoWorld(opts.seed ?? DEMO_SEED_DEFAULT, now);
  const batch: Observation[] = [];
  let left = records;
  while (left > 0) {
    batch.length = 0;
    world.nextDomain(batch);
    for (let i = 0; i < batch.length && left > 0; i++, left--) yield batch[i]!;
  }
}
