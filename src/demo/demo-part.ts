// One part of the demo dataset, aggregated and written to shard files on a
// thread of its own (workers/demo.ts), for the calling thread to publish
// (parallel.ts). The demo generator is one seeded sequence (it claims each
// name once across the whole data set), so it cannot be cut into ranges:
// every part runs the whole sequence and keeps the RRsets whose owner name
// falls to it (partOf). An owner's RRsets all fall to one part, so nothing
// a part aggregates is in another, and the parts together are exactly the
// data one thread would make. Generating is about a fifth of one thread's
// work at 1 M RRsets (1.2 of 5.3 s; the table and the shard the rest), so
// parts pay off with cores. On this 2-core machine two parts make 1 M
// RRsets in 4.4-4.5 s, 1.25x one thread, for 45 % more CPU (`node
// dist/bench/ingest.js --only demo --baseline DIR`, DIR a build without
// parts): each part generates everything, and the two contend for memory
// while they intern.

import { fnv1aOfString } from '../lib/fnv.js';
import { ShardSpiller, type WrittenShard } from '../shard/shard-spiller.js';
import { demoObservations } from './generate.js';

export interface DemoPartTask {
  /** RRsets of the whole demo data set (demoObservations' records). */
  records: number;
  part: number;
  parts: number;
  dataDir: string;
  label: string;
  now: number;
  /** This part's share of the run's in-memory RRsets. */
  memoryRrsets: number;
  /** The run's WriterLock id (file-lock.ts), held by the calling thread. */
  writer: string;
  /** Float64Array[parts]: observations each part has generated so far, for the progress bar. */
  progress: SharedArrayBuffer;
}

export interface DemoPartResult {
  records: number;
  observations: number;
  written: WrittenShard[];
}

/** The part (of `parts`) an owner name falls to: FNV-1a of its characters. */
export function partOf(rrname: string, parts: number): number {
  return fnv1aOfString(rrname) % parts;
}

/** Observations between two progress reports. */
const PROGRESS_EVERY = 1 << 14;

export async function generateDemoPart(t: DemoPartTask): Promise<DemoPartResult> {
  const spiller = new ShardSpiller(t.dataDir, t.label, t.now, t.memoryRrsets, t.writer);
  const progress = new Float64Array(t.progress);
  try {
    let n = 0;
    for (const o of demoObservations({ records: t.records })) {
      if (partOf(o.rrname, t.parts) === t.part) await spiller.add(o);
      if (++n % PROGRESS_EVERY === 0) progress[t.part] = n;
    }
    const written = await spiller.close();
    return { records: spiller.records, observations: spiller.observations, written };
  } catch (err) {
    await spiller.abort();
    throw err;
  }
}
