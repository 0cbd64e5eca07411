// The shard writer's output hash and time, on a fixed input.
//
//   npm run build && node dist/bench/shard-bytes.js [--records 200000] [--runs 3]
//
// Prints the sha256 of buildShard's FlatBuffer (its pieces in file order) for bench/shard-input.ts's
// table, which must not change when the writer is refactored (a change of the
// shard format changes it on purpose), and the median build time over --runs
// builds of the same table, which is the writer alone without parsing or I/O.
// The median CPU time (user + system) of a build is printed too: on a machine
// shared with other work it varies less than the wall time.

import { createHash } from 'node:crypto';
import { buildShard } from '../src/shard/shard-writer.js';
import { SHARD_INPUT_NOW, shardInputTable } from './shard-input.js';
import { arg, environment, fmt } from './common.js';

const records = Number(arg('records', '200000'));
const runs = Number(arg('runs', '3'));

console.log(`command: node dist/bench/shard-bytes.js --records ${records} --runs ${runs}`);
console.log(`env: ${environment()}`);
let started = performance.now();
const table = shardInputTable(records);
const tableSeconds = fmt((performance.now() - started) / 1000, 2);
console.log(`table: ${table.size} RRsets, ${table.names.length} owners, ${table.rdataText.length} rdata in ${tableSeconds} s`);
const hashes = new Set<string>();
const ms: number[] = [];
const cpuMs: number[] = [];
let bytes = 0;
for (let r = 0; r < runs; r++) {
  started = performance.now();
  const cpu = process.cpuUsage();
  const { body } = buildShard(table, 'x', SHARD_INPUT_NOW);
  const used = process.cpuUsage(cpu);
  ms.push(performance.now() - started);
  cpuMs.push((used.user + used.system) / 1000);
  bytes = body.byteLength;
  const hash = createHash('sha256');
  for (const piece of body.pieces) hash.update(piece);
  hashes.add(hash.digest('hex'));
}
if (hashes.size !== 1) throw new Error(`buildShard gave ${hashes.size} different bodies for one table`);
ms.sort((a, b) => a - b);
cpuMs.sort((a, b) => a - b);
console.log(`body: ${bytes} bytes, sha256 ${[...hashes][0]}`);
console.log(`buildShard: median ${fmt(ms[ms.length >> 1]!, 0)} ms over ${runs} runs (${ms.map((m) => fmt(m, 0)).join(', ')}); ` +
  `CPU median ${fmt(cpuMs[cpuMs.length >> 1]!, 0)} ms (${cpuMs.map((m) => fmt(m, 0)).join(', ')})`);
