// `rrscan demo`: the deterministic demo dataset (src/demo) into new shards.
// `rrscan start` generates it too, the first time.

import type { Command } from 'commander';
import { Option } from 'commander';
import { LIMITS } from '../config/limits.js';
import { ingestDemo } from '../demo/parallel.js';
import { dataOption, integer } from './flags.js';
import { progressBar } from './progress.js';

export const DEMO_RECORDS_DEFAULT = 1_000_000;

export async function runDemo(dataDir: string, records: number): Promise<void> {
  const bar = progressBar('demo data', records, 'RRsets');
  const summary = await ingestDemo(dataDir, records, `demo ${records}`, (n) => bar.update(n));
  bar.update(records);
  bar.stop();
  console.log(`demo: ${summary.rrsets} RRsets (${summary.records} records) in ${summary.shards.length} shard(s), ` +
    `${summary.seconds.toFixed(1)} s`);
}

export function registerDemoCommand(program: Command): void {
  program.command('demo')
    .description('generate the deterministic demo dataset into new shards')
    .addOption(dataOption())
    .option('--rrsets <n>', 'RRsets to generate', integer('--rrsets', 1, LIMITS.demoRecordsMax), DEMO_RECORDS_DEFAULT)
    // The old name counted RRsets too, where every other "records" counts records (IngestSummary.records).
    .addOption(new Option('--records <n>', 'deprecated: the old name of --rrsets').hideHelp()
      .argParser(integer('--records', 1, LIMITS.demoRecordsMax)))
    .action(async (o: { data: string; rrsets: number; records?: number }) => {
      if (o.records !== undefined) console.error('rrscan demo: --records is deprecated and will go; it is --rrsets now (it counts RRsets)');
      await runDemo(o.data, o.records ?? o.rrsets);
    });
}
