// Ingest throughput (issue 2): records/s for NDJSON (generated), zone and
// pcap (real files from ../shared/data/real when present), with peak RSS.
//
//   npm run build && node dist/bench/ingest.js [--ndjson-records 2000000] [--memory-rrsets 500000] [--workers N]
//
// Target: >= 1 M records/s for NDJSON on the 2-core machine, with peak
// memory bounded by --memory-rrsets, not by the input size. NDJSON runs
// twice, on one thread and on --workers threads (default one per core), so
// the parallel gain is measured in the same run. Peak RSS is the process's,
// ingest threads included.

import { createWriteStream, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
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
      ? `{"count":${1 + (i % 9)},"time_first":${1_400_000_000 + i},"time_last":${1_600_000_000 + i},"rrname":"${name}","rrtype":"NS","bailiwick":"${name.slice(name.indexOf('.') + 1)}","rdata":["ns1.${name}","ns2.${name}"]}\n`
      : `{"count":${1 + (i % 9)},"time_first":${1_400_000_000 + i},"time_last":${1_600_000_000 + i},"rrname":"${name}","rrtype":"A","bailiwick":"${name.slice(name.indexOf('.') + 1)}","rdata":["10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}"]}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    i++;
  }
  await new Promise<void>((r) => out.end(() => r()));
}

async function measure(label: string, format: SourceFormat, files: string[], threads = 1): Promise<string> {
  const dataDir = path.join(OUT, `ingest-${format}`);
  rmSync(dataDir, { recursive: true, force: true });
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  try {
    const s = await ingestFiles(files, { dataDir, format, maxErrors: 1_000_000, memoryRrsets, threads });
    peak = Math.max(peak, process.memoryUsage().rss);
    const bytes = files.reduce((a, f) => a + statSync(f).size, 0);
    return `${label.padEnd(34)} ${String(s.records).padStart(10)} ${String(s.rrsets).padStart(9)} ${fmt(s.seconds, 2).padStart(8)} ` +
      `${String(Math.round(s.records / s.seconds)).padStart(11)} ${fmt(bytes / 2 ** 20 / s.seconds, 1).padStart(8)} ${fmt(peak / 2 ** 20, 0).padStart(8)}`;
  } finally {
    clearInterval(timer);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  console.log(`command: node dist/bench/ingest.js --ndjson-records ${ndjsonRecords} --memory-rrsets ${memoryRrsets} --workers ${workers}`);
  console.log(`env: ${environment()}`);
  console.log(`${'input'.padEnd(34)} ${'records'.padStart(10)} ${'RRsets'.padStart(9)} ${'seconds'.padStart(8)} ${'records/s'.padStart(11)} ${'MiB/s'.padStart(8)} ${'peak MiB'.padStart(8)}`);
  const nd = path.join(OUT, `ingest-${ndjsonRecords}.ndjson`);
  await writeNdjson(nd, ndjsonRecords);
  console.log(await measure(`ndjson (${ndjsonRecords} lines) 1 thread`, 'ndjson', [nd]));
  if (workers > 1) console.log(await measure(`ndjson ${workers} threads`, 'ndjson', [nd], workers));
  if (existsSync(REAL)) {
    console.log(await measure('zone root.zone.2024101100', 'zone', [path.join(REAL, 'zones/root.zone.2024101100')]));
    console.log(await measure('pcap compactor nsd+knot live', 'pcap', [
      path.join(REAL, 'pcap/compactor-nsd-live-20161006.pcap'), path.join(REAL, 'pcap/compactor-knot-live-20161006.pcap')]));
  } else {
    console.log(`(zone and pcap rows skipped: ${REAL} not found)`);
  }
  console.log('target: ndjson >= 1000000 records/s; peak memory bounded by --memory-rrsets');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
