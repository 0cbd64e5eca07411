// `rrscan clickhouse init`: checks that the server can hold the schema asked
// for (replication, engines of an earlier init), then runs schema.ts's
// statements and adds the ngram index where a flex table lacks it. Every
// check that fails names the fix.

import { errorCode, type ClickHouse } from './client.js';
import { ClickHouseError } from '../errors/catalogue.js';
import { sqlString } from './literal.js';
import {
  AGGREGATING_TABLES, aggregatingEngine, NGRAM_INDEX, ngramIndexStatements, schemaStatements, type SchemaTarget,
} from './schema.js';
import { serverTraits } from './server-traits.js';
import { ngramIndexedTables } from './tables.js';

/** What init did: the server's version, and what it could not check (for the operator to make sure of). */
export interface InitResult {
  version: string;
  warnings: string[];
}

/**
 * Creates whatever of the schema is missing (every statement is IF NOT
 * EXISTS). First checks, with `replicated`, that the server can hold
 * replicated tables, and always that tables an earlier init made have the
 * engine asked for (IF NOT EXISTS would keep them as they are).
 */
export async function initSchema(ch: ClickHouse, t: SchemaTarget): Promise<InitResult> {
  const traits = await serverTraits(ch);
  const warnings = t.replicated === true ? await checkReplication(ch, t, traits.version) : [];
  await checkEngines(ch, t);
  for (const sql of schemaStatements(t, traits)) await ch.exec(sql);
  if (traits.skipIndexes) await addNgramIndexes(ch, t.database);
  return { version: traits.version, warnings };
}

/** Adds the ngram index where a flex table lacks it (made before an upgrade, or new). */
async function addNgramIndexes(ch: ClickHouse, database: string): Promise<void> {
  // Only where it is missing: MATERIALIZE rewrites the index of every part, which a repeated init must not redo.
  const indexed = await ngramIndexedTables(ch, database);
  for (const [table, column] of NGRAM_INDEX.tables) {
    if (indexed.has(table)) continue;
    const granularity = await granularityOf(ch, database, table);
    for (const sql of ngramIndexStatements(database, table, column, granularity)) await ch.exec(sql);
  }
}

/** Rows per granule of a table: its own index_granularity, else the server's default. */
async function granularityOf(ch: ClickHouse, database: string, table: string): Promise<number> {
  const engine = await ch.exec(`SELECT engine_full FROM system.tables WHERE database = ${sqlString(database)} ` +
    `AND name = ${sqlString(table)} FORMAT TabSeparated`);
  const own = /\bindex_granularity = (\d+)/.exec(engine);
  if (own) return Number(own[1]);
  return Number(await ch.exec("SELECT value FROM system.merge_tree_settings WHERE name = 'index_granularity' FORMAT TabSeparated"));
}

/** ClickHouse's code for a table it does not know: system.zookeeper exists only when <zookeeper> is configured. */
const UNKNOWN_TABLE_CODE = 60;
const FIX_SEE = '(src/clickhouse/schema.md, Clusters)';

/**
 * Whether the server can hold replicated tables: a ZooKeeper it reaches,
 * the shard and replica macros the tables' paths use, and, with a cluster,
 * internal_replication on every shard that has replicas. Throws, naming the
 * fix; answers what it could not see (18.16's system.clusters does not show
 * internal_replication).
 */
async function checkReplication(ch: ClickHouse, t: SchemaTarget, version: string): Promise<string[]> {
  const where = `ClickHouse at ${ch.url}`;
  try {
    await ch.exec("SELECT count() FROM system.zookeeper WHERE path = '/'");
  } catch (err) {
    const text = (err as Error).message;
    if (errorCode(text) === UNKNOWN_TABLE_CODE) {
      throw new ClickHouseError(`--replicated: ${where} has no ZooKeeper, which replicated tables need: add a <zookeeper> ` +
        `section naming your ZooKeeper servers to its config.xml and restart it ${FIX_SEE}`);
    }
    throw new ClickHouseError(`--replicated: ${where} cannot reach its ZooKeeper: ${text}`);
  }
  const macros = new Set((await ch.exec('SELECT * FROM system.macros FORMAT TabSeparated')).split('\n').map((l) => l.split('\t')[0]));
  const missing = ['shard', 'replica'].filter((m) => !macros.has(m));
  if (missing.length > 0) {
    throw new ClickHouseError(`--replicated: ${where} has no ${missing.join(' and ')} macro, which the replicated tables' ` +
      'ZooKeeper paths use: add <macros><shard>SHARD</shard><replica>REPLICA</replica></macros> to its config.xml ' +
      `(the same shard on every replica of a shard, a replica name of its own on each) and restart it ${FIX_SEE}`);
  }
  return t.cluster === undefined ? [] : checkInternalReplication(ch, t.cluster, version);
}

/**
 * A Distributed table over replicated shards must write each block to ONE
 * replica and let replication copy it (internal_replication): written to
 * every replica as well, it would be counted once per replica, since ingest
 * turns deduplication off (client.ts insertRowBinary).
 */
async function checkInternalReplication(ch: ClickHouse, cluster: string, version: string): Promise<string[]> {
  const rows = (await ch.exec(`SELECT * FROM system.clusters WHERE cluster = ${sqlString(cluster)} FORMAT JSONEachRow`))
    .split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { shard_num: number; internal_replication?: number })
    .map((r) => ({
      shard: Number(r.shard_num), internal: r.internal_replication === undefined ? undefined : Number(r.internal_replication),
    }));
  if (rows.length === 0) {
    throw new ClickHouseError(`--cluster ${cluster}: ClickHouse at ${ch.url} has no such cluster in its remote_servers ${FIX_SEE}`);
  }
  const replicas = new Map<number, number>();
  for (const r of rows) replicas.set(r.shard, (replicas.get(r.shard) ?? 0) + 1);
  const several = rows.filter((r) => replicas.get(r.shard)! > 1);
  if (several.length === 0) return [];
  const fix = `<internal_replication>true</internal_replication> in each <shard> of cluster ${cluster} in remote_servers`;
  if (several[0]!.internal === undefined) {
    return [`ClickHouse ${version} does not show internal_replication (system.clusters), so init cannot check it: ` +
      `set ${fix}, or every row is counted once per replica ${FIX_SEE}`];
  }
  const off = [...new Set(several.filter((r) => r.internal === 0).map((r) => r.shard))];
  if (off.length > 0) {
    throw new ClickHouseError(`--cluster ${cluster}: shard ${off.join(', ')} has replicas but no internal_replication, so a ` +
      `Distributed INSERT would write every replica and replication would copy it again: set ${fix} ${FIX_SEE}`);
  }
  return [];
}

/** Fails when an aggregating table exists with the other engine than asked for (made by an earlier init). */
async function checkEngines(ch: ClickHouse, t: SchemaTarget): Promise<void> {
  const want = aggregatingEngine(t);
  const names = AGGREGATING_TABLES.map((table) => sqlString(table)).join(', ');
  const rows = (await ch.exec(`SELECT name, engine FROM system.tables WHERE database = ${sqlString(t.database)} ` +
    `AND name IN (${names}) ORDER BY name FORMAT TabSeparated`)).split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
  const wrong = rows.filter(([, e]) => e !== want).map(([n, e]) => `${n} (${e})`);
  if (wrong.length > 0) {
    throw new ClickHouseError(`database ${t.database} already has ${wrong.join(', ')}, not ${want}: an earlier init made them ` +
      `${t.replicated === true ? 'without' : 'with'} --replicated; use another --database, or drop these tables first ${FIX_SEE}`);
  }
}
