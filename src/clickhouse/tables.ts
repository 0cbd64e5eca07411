// Table discovery: the tables of a database as `rrscan clickhouse init` made
// them, for searches to read and ingest to write (the names are schema.ts's).

import type { ClickHouse } from './client.js';
import { ClickHouseError } from '../errors/catalogue.js';
import { sqlIdentifier, sqlString } from './literal.js';
import { DISTRIBUTED_SUFFIX, NGRAM_INDEX, type Tables } from './schema.js';
import { serverTraits } from './server-traits.js';

/**
 * The tables of `database` as `init` made them: the Distributed ones when
 * init ran with --cluster, else the node's own. Fails, naming the fix, when
 * there are none.
 */
export async function findTables(ch: ClickHouse, database: string): Promise<Tables> {
  const db = sqlIdentifier(database);
  const names = (await ch.exec(`SELECT name FROM system.tables WHERE database = ${sqlString(database)} FORMAT TabSeparated`))
    .split('\n');
  if (!names.includes('rrsets')) {
    throw new ClickHouseError(`${ch.url}: no rrscan tables in database ${database} (run \`rrscan clickhouse init\` first)`);
  }
  const distributed = names.includes(`rrsets${DISTRIBUTED_SUFFIX}`);
  const t = (name: string) => `${db}.${name}${distributed ? DISTRIBUTED_SUFFIX : ''}`;
  // Through Distributed tables the index is on each shard's own tables: init makes every shard alike, this one speaks for all.
  const indexed = (await serverTraits(ch)).skipIndexes ? await ngramIndexedTables(ch, database) : new Set<string>();
  return {
    rrsets: t('rrsets'), flex_names: t('flex_names'), flex_rdata: t('flex_rdata'), rdata_index: t('rdata_index'),
    inputs: { rrsets_in: t('rrsets_in'), flex_names_in: t('flex_names_in'), flex_rdata_in: t('flex_rdata_in'),
      rdata_index_in: t('rdata_index_in') },
    distributed,
    ngramIndex: NGRAM_INDEX.tables.every(([table]) => indexed.has(table)),
  };
}

/** The flex tables of `database` that have the ngram index. */
export async function ngramIndexedTables(ch: ClickHouse, database: string): Promise<Set<string>> {
  const rows = await ch.exec(`SELECT table FROM system.data_skipping_indices WHERE database = ${sqlString(database)} ` +
    `AND name = ${sqlString(NGRAM_INDEX.name)} FORMAT TabSeparated`);
  return new Set(rows.split('\n').filter((r) => r !== ''));
}
