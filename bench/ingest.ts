// Ingest throughput (issue 2): records/s for NDJSON (generated), zone and
// pcap (real files from ../shared/data/real when present), with peak RSS.
//
//   npm run build && node dist/bench/ingest.js [--ndjson-records 2000000] [--memory-rrsets 500000] [--workers N]
//
// Target: >= 1 M records/s for NDJSON on the 2-core machine, with peak
// memory bounded by --memory-rrsets, not by the input size. NDJSON runs
// twice, on one thread and on --workers threads (default one per core), so
// the parallel gain is measured in the same run. Each row runs in a process
// of its own, and its peak is that process's VmHWM (ingest threads
// included), so no row inherits another's heap.
//
// The CPU columns say where a row's time goes beyond its wall clock: user
// and system seconds over all its threads, and minor page faults. On this
// VM (Firecracker) the first touch of a fresh page costs about 10 us, so
// the fault count is a large part of the system time; see bench/README.md.

import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { ingestFiles, type SourceFormat } from '../src/ingest/run.js';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { benchNames } from './names.js';
import { OUT, arg, environment, fmt } from './common.js';

const ndjsonRecords = Number(arg('ndjson-records', '2000000'));
const memoryRrsets = Number(arg('memory-rrsets', '500000'));
const workers = Number(arg('workers', String(availableParallelism())));
const REAL = path.resolve(PACKAGE_ROOT, '../shared/data/real');

async function writeNdjson(file: string, n: number): Promise<void> {
  if (existsSync(file)) return;
  const out = createWriteStream(file);
  let i = 0;
  for (const name of benchNames(n, 11)) {
    const line = i % 4 === 3
      ? `{"count":${1 + (i % 9)},"time_first":${1_400_000_000 + i},"time_last":${1_600_000_000 + i},"rrname":"${name}",` +
        `"rrtype":"NS","bailiwick":"${name.slice(name.indexOf('.') + 1)}","rdata":["ns1.${name}","ns2.${name}"]}\n`
      : `{"count":${1 + (i % 9)},"time_first":${1_400_000_000 + i},"time_last":${1_600_000_000 + i},"rrname":"${name}",` +
        `"rrtype":"A","bailiwick":"${name.slice(name.indexOf('.') + 1)}",` +
        `"rdata":["10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}"]}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    i++;
  }
  await new Promise<void>((r) => out.end(() => r()));
}

interface Row {
  label: string;
  format: SourceFormat;
  files: string[];
  threads: number;
}

/** Peak resident set of this process so far (VmHWM), bytes. */
function peakRss(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

interface Measured {
  line: string;
  recordsPerSecond: number;
}

/** Runs one row in this process (the child side of runRow). */
async function measure(row: Row): Promise<Measured> {
  const dataDir = path.join(OUT, `ingest-${row.format}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  try {
    const before = process.resourceUsage();
    const s = await ingestFiles(row.files, { dataDir, format: row.format, maxErrors: 1_000_000, memoryRrsets, threads: row.threads });
    const after = process.resourceUsage();
    const bytes = row.files.reduce((a, f) => a + statSync(f).size, 0);
    const user = (after.userCPUTime - before.userCPUTime) / 1e6, sys = (after.systemCPUTime - before.systemCPUTime) / 1e6;
    const recordsPerSecond = Math.round(s.records / s.seconds);
    const line = `${row.label.padEnd(34)} ${String(s.records).padStart(10)} ${String(s.rrsets).padStart(9)} ` +
      `${fmt(s.seconds, 2).padStart(8)} ` +
      `${String(recordsPerSecond).padStart(11)} ${fmt(bytes / 2 ** 20 / s.seconds, 1).padStart(8)} ` +
      `${fmt(peakRss() / 2 ** 20, 0).padStart(8)} ${fmt(user, 2).padStart(7)} ${fmt(sys, 2).padStart(6)} ` +
      `${String(after.minorPageFault - before.minorPageFault).padStart(9)} ${fmt(((user + sys) / s.records) * 1e6, 1).padStart(11)}`;
    return { line, recordsPerSecond };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs one row in a fresh process. */
function runRow(row: Row): Measured {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--row', JSON.stringify(row),
    '--memory-rrsets', String(memoryRrsets)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`row ${row.label} failed (${r.status})`);
  return JSON.parse(r.stdout) as Measured;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  console.log(`command: node dist/bench/ingest.js --ndjson-records ${ndjsonRecords} --memory-rrsets ${memoryRrsets} --workers ${workers}`);
  console.log(`env: ${environment()}`);
  console.log(`${'input'.padEnd(34)} ${'records'.padStart(10)} ${'RRsets'.padStart(9)} ${'seconds'.padStart(8)} ` +
    `${'records/s'.padStart(11)} ${'MiB/s'.padStart(8)} ${'peak MiB'.padStart(8)} ${'user s'.padStart(7)} ${'sys s'.padStart(6)} ` +
    `${'faults'.padStart(9)} ${'cpu us/rec'.padStart(11)}`);
  const nd = path.join(OUT, `ingest-${ndjsonRecords}.ndjson`);
  await writeNdjson(nd, ndjsonRecords);
  const one = runRow({ label: `ndjson (${ndjsonRecords} lines) 1 thread`, format: 'ndjson', files: [nd], threads: 1 });
  console.log(one.line);
  let best = one.recordsPerSecond;
  if (workers > 1) {
    const many = runRow({ label: `ndjson ${workers} threads`, format: 'ndjson', files: [nd], threads: workers });
    console.log(many.line);
    best = Math.max(best, many.recordsPerSecond);
  }
  if (existsSync(REAL)) {
    console.log(runRow({
      label: 'zone root.zone.2024101100', format: 'zone', files: [path.join(REAL, 'zones/root.zone.2024101100')], threads: 1,
    }).line);
    console.log(runRow({ label: 'pcap compactor nsd+knot live', format: 'pcap', threads: 1, files: [
      path.join(REAL, 'pcap/compactor-nsd-live-20161006.pcap'), path.join(REAL, 'pcap/compactor-knot-live-20161006.pcap')] }).line);
  } else {
    console.log(`(zone and pcap rows skipped: ${REAL} not found)`);
  }
  const target = 1_000_000;
  const verdict = best >= target ? 'MET' : `MISSED (${best} records/s, ${fmt(target / best, 1)}x short)`;
  console.log(`target: ndjson >= ${target} records/s: ${verdict}; ` +
    'peak memory bounded by --memory-rrsets');
}

const rowArg = arg('row', '');
(rowArg ? measure(JSON.parse(rowArg) as Row).then((m) => console.log(JSON.stringify(m))) : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
