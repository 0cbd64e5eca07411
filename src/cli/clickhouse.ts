// `rrscan clickhouse init`: the ClickHouse data tier's database and tables
// (src/clickhouse/schema.ts), which `ingest --clickhouse-url` writes and
// `serve --clickhouse-url` reads.

import type { Command } from 'commander';
import { ClickHouse } from '../clickhouse/client.js';
import { initSchema } from '../clickhouse/schema-init.js';
import { CLICKHOUSE_DATABASE_DEFAULT } from './flags.js';

export function registerClickHouseCommand(program: Command): void {
  const clickhouse = program.command('clickhouse').description('the ClickHouse data tier');
  clickhouse.command('init')
    .description('create the database and tables rrscan uses (idempotent: what exists is left as it is)')
    .requiredOption('--url <url>', 'ClickHouse HTTP interface, http://HOST:8123')
    .option('--database <name>', 'database to create the tables in', CLICKHOUSE_DATABASE_DEFAULT)
    .option('--cluster <name>', 'this server is a shard of cluster NAME (from its remote_servers): also create ' +
      'Distributed tables over it, through which ingest writes and serve reads; run init on every shard')
    .option('--replicated', 'replicated tables (ReplicatedAggregatingMergeTree) through the server\'s ZooKeeper, among the ' +
      'servers whose <macros> name the same shard; run init on every replica')
    .action(async (o: { url: string; database: string; cluster?: string; replicated?: boolean }) => {
      const ch = new ClickHouse(o.url);
      try {
        const { version, warnings } = await initSchema(ch, {
          database: o.database, ...(o.cluster !== undefined ? { cluster: o.cluster } : {}), replicated: o.replicated === true,
        });
        for (const w of warnings) console.error(`rrscan clickhouse init: warning: ${w}`);
        console.log(`clickhouse init: database ${o.database} ready on ClickHouse ${version} at ${o.url}` +
          `${o.replicated === true ? ' (replicated)' : ''}`);
      } catch (err) {
        console.error(`rrscan clickhouse init: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      } finally {
        ch.close();
      }
    });
}
