// Micro-benchmark: native/sort.cc's sortRecords on the record sets the shard
// writer sorts, against another build's addon in the same run.
//
// Builds, from bench/names.ts's deterministic names: the names reversed
// (the owner index's order: "com.example.www."), the names as they are,
// "ns1.<name>" rdata texts, IPv4 rdata wire bytes (4 bytes, tiebreak the
// rrtype, a quarter of them repeated under another rrtype so equal records
// meet their tiebreak) and 16-byte fixed keys (the IPv6 index's); every
// record carries the blob's newline except the wire bytes and fixed keys, as
// the writer's do. Each set is sorted by this build's addon and by
// --baseline's (required: a built checkout of the commit to compare with,
// e.g. `git worktree add ../prev HEAD~1`, then `npm ci && npm run build`
// there), alternating, --rounds times; prints the best ms of each, their
// ratio, and whether the two orders are identical (they must be: the order is
// the shard format's).
//
//   npm run build && node dist/bench/micro/record-sort.js --baseline DIR [--names 2000000] [--rounds 5]
//     [--only names-rev,names-fwd,ns-text,ipv4-wire,fixed16]

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { benchNames } from '../names.js';
import { sortRecords } from '../../src/shard/record-sort.js';
import { makeBlob, reversedNames } from '../../src/shard/writer/blobs.js';
import { arg, fmt } from '../common.js';

type Sort = (bytes: Uint8Array, offsets: Uint32Array, tiebreak?: Uint32Array) => Uint32Array;

interface RecordSet { name: string; bytes: Uint8Array; offsets: Uint32Array; tiebreak?: Uint32Array }

const count = Number(arg('names', '2000000'));
const rounds = Number(arg('rounds', '5'));
const baselineArg = arg('baseline', '');
if (baselineArg === '') {
  console.error('record-sort: --baseline DIR is required (a built checkout whose addon to compare against)');
  process.exit(2);
}
const baselineDir = path.resolve(baselineArg);
const only = arg('only', '').split(',').filter((s) => s !== '');

/** `count` records of `size` bytes each, back to back, with the offsets of them. */
function fixedRecords(bytes: Uint8Array, size: number): { bytes: Uint8Array; offsets: Uint32Array } {
  return { bytes, offsets: Uint32Array.from({ length: bytes.length / size + 1 }, (_, i) => i * size) };
}

function recordSets(names: string[]): RecordSet[] {
  const fwd = makeBlob(names);
  const n = names.length;
  const ip4 = new Uint8Array(n * 4);
  const ip4Type = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    // benchObservations' addresses; every fourth record repeats the one before it as another rrtype.
    const j = i % 4 === 3 ? i - 1 : i;
    const ip = 0x0a000000 + ((j * 2654435761) >>> 8);
    ip4.set([ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255], i * 4);
    ip4Type[i] = i % 4 === 3 ? 28 : 1;
  }
  const key16 = new Uint8Array(n * 16);
  for (let i = 0; i < n; i++) {
    // 2001:db8::/32 with a few prefixes and scattered low bits: long shared prefixes, like real IPv6 rdata.
    key16.set([0x20, 0x01, 0x0d, 0xb8, 0, i % 7], i * 16);
    const x = Math.imul(i, 2654435761) >>> 0;
    key16.set([x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255], i * 16 + 12);
  }
  return [
    { name: 'names-rev', ...reversedNames(fwd) },
    { name: 'names-fwd', ...fwd },
    { name: 'ns-text', ...makeBlob(names.map((s) => `ns1.${s}`)) },
    { name: 'ipv4-wire', ...fixedRecords(ip4, 4), tiebreak: ip4Type },
    { name: 'fixed16', ...fixedRecords(key16, 16) },
  ].filter((s) => only.length === 0 || only.includes(s.name));
}

function time(sort: Sort, s: RecordSet): { ms: number; order: Uint32Array } {
  const t0 = performance.now();
  const order = sort(s.bytes, s.offsets, s.tiebreak);
  return { ms: performance.now() - t0, order };
}

function sameOrder(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function main(): void {
  const addonFile = path.join(baselineDir, 'native', 'build', 'Release', 'rrscan_sort.node');
  if (!existsSync(addonFile)) throw new Error(`no baseline addon at ${addonFile}: build that checkout first (npm run build)`);
  const baseline = (createRequire(import.meta.url)(addonFile) as { sortRecords: Sort }).sortRecords;
  console.log(`# record-sort micro-benchmark: node ${path.relative(process.cwd(), process.argv[1] ?? '')} --names ${count} ` +
    `--rounds ${rounds} --baseline ${baselineDir}`);
  console.log(`# node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, ${os.platform()}, ` +
    `load average ${os.loadavg()[0]!.toFixed(2)}`);
  console.log(`# baseline: ${addonFile}; ${rounds} alternating rounds per set, best shown`);
  const names = [...benchNames(count)];
  console.log('set          records   MB     this ms   baseline ms   speed-up   same order');
  let ours = 0, theirs = 0;
  for (const s of recordSets(names)) {
    const n = s.offsets.length - 1;
    let best = Infinity, bestBase = Infinity, same = true;
    for (let r = 0; r < rounds; r++) {
      const a = time(sortRecords, s);
      const b = time(baseline, s);
      best = Math.min(best, a.ms);
      bestBase = Math.min(bestBase, b.ms);
      same &&= sameOrder(a.order, b.order);
    }
    ours += best;
    theirs += bestBase;
    console.log(`${s.name.padEnd(12)} ${String(n).padStart(8)} ${fmt(s.bytes.length / 2 ** 20).padStart(5)} ` +
      `${fmt(best).padStart(10)} ${fmt(bestBase).padStart(13)} ${`${fmt(bestBase / best, 2)}x`.padStart(10)}   ${same ? 'yes' : 'NO'}`);
    if (!same) process.exitCode = 1;
  }
  console.log(`${'total'.padEnd(27)} ${fmt(ours).padStart(10)} ${fmt(theirs).padStart(13)} ${`${fmt(theirs / ours, 2)}x`.padStart(10)}`);
}

main();
