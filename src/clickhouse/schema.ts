// The ClickHouse schema of rrscan's data tier, as the statements that create
// it (schema.md explains each table and why). Every statement is
// CREATE ... IF NOT EXISTS, so `rrscan clickhouse init` may run any number of
// times; all of it runs on ClickHouse 18.16 (Debian's), which has no
// SimpleAggregateFunction, no `input()` and no query parameters.
//
// Ingest writes plain rows into the *_in tables (engine Null: nothing is
// stored there); a materialized view per table turns each INSERT block into
// aggregate states in the AggregatingMergeTree behind it, and merges fold
// equal keys by the sighting rule (model/sighting.ts). Reads finish the
// aggregation with GROUP BY and -Merge, so an answer never depends on whether
// a merge has run yet. First times are aggregated with min() over
// NONE_TIME in place of 0 ("never seen that way", which loses to any time):
// minNonZero in SQL, mapped back to 0 by firstTimeSql().
//
// With --replicated the aggregating tables are ReplicatedAggregatingMergeTree
// (schema.md, Replicas); everything else is the same.

import { errorCode, type ClickHouse } from './client.js';
import { ClickHouseError } from '../errors/catalogue.js';
import { sqlIdentifier, sqlString, sqlUInt } from './literal.js';

/** Stands for "no first time" inside min() states: larger than every real epoch second. */
export const NONE_TIME = 4294967295;

/** SQL for a first time read back from a min() state: NONE_TIME becomes 0 again. */
export function firstTimeSql(merged: string): string {
  return `if(${merged} = ${NONE_TIME}, 0, ${merged})`;
}

/** Where the tables live. */
export interface SchemaTarget {
  database: string;
  /**
   * The node is one shard of this cluster (its servers' remote_servers):
   * beside its own tables it gets a Distributed table over the cluster for
   * each (`<table>_all`), through which ingest writes and searches read.
   * Run init on every node. (ON CLUSTER would need ZooKeeper on 18.16.)
   */
  cluster?: string;
  /**
   * The aggregating tables are ReplicatedAggregatingMergeTree, replicated
   * through the server's ZooKeeper among the servers whose <macros> name the
   * same shard (each naming its own replica). Run init on every replica.
   */
  replicated?: boolean;
}

/** Fully qualified names of the tables a search reads, or an ingest writes. */
export interface Tables {
  rrsets: string;
  flex_names: string;
  flex_rdata: string;
  rdata_index: string;
  inputs: Record<InputTable, string>;
  /** Through Distributed tables: INSERTs wait for every shard (insert_distributed_sync). */
  distributed: boolean;
  /**
   * flex_names and flex_rdata have the ngram skip index (NGRAM_INDEX), so
   * flexible searches add the trigram conditions it answers.
   */
  ngramIndex: boolean;
}

export const DISTRIBUTED_SUFFIX = '_all';

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

/** The input table names and their columns in RowBinary order (ingest writes them in exactly this order). */
export const INPUT_COLUMNS = {
  rrsets_in: [
    ['rrname_rev', 'String'], ['rrname', 'String'], ['rrtype', 'UInt16'], ['bailiwick', 'String'],
    ['rdata', 'Array(String)'], ['rdata_wire', 'Array(String)'], ['count', 'UInt64'],
    ['time_first', 'UInt32'], ['time_last', 'UInt32'], ['zone_time_first', 'UInt32'], ['zone_time_last', 'UInt32'],
  ],
  flex_names_in: [['rrname', 'String'], ['rrtype', 'UInt16'], ['first', 'UInt32'], ['last', 'UInt32']],
  flex_rdata_in: [['rdata', 'String'], ['rrtype', 'UInt16'], ['rdata_wire', 'String'], ['first', 'UInt32'], ['last', 'UInt32']],
  rdata_index_in: [
    ['kind', 'UInt8'], ['rdata_key', 'String'], ['rrtype', 'UInt16'], ['rrname_rev', 'String'], ['rrname', 'String'],
    ['rdata_name', 'String'], ['rdata', 'String'], ['rdata_wire', 'String'], ['bailiwick', 'String'], ['rrset_id', 'UInt64'],
    ['rrset_rdata', 'Array(String)'], ['count', 'UInt64'],
    ['time_first', 'UInt32'], ['time_last', 'UInt32'], ['zone_time_first', 'UInt32'], ['zone_time_last', 'UInt32'],
  ],
} as const;

export type InputTable = keyof typeof INPUT_COLUMNS;

/** rdata_index.kind: how rdata_key was made from the record. */
export const RDATA_KIND = { NAME: 1, IP: 2 } as const;

const firstState = (col: string) => `minState(if(${col} = 0, ${NONE_TIME}, ${col}))`;
const SIGHTING_STATES = [
  'count AggregateFunction(sum, UInt64)',
  'time_first AggregateFunction(min, UInt32)', 'time_last AggregateFunction(max, UInt32)',
  'zone_time_first AggregateFunction(min, UInt32)', 'zone_time_last AggregateFunction(max, UInt32)',
];
const SIGHTING_SELECT = `sumState(count) AS count, ${firstState('time_first')} AS time_first, maxState(time_last) AS time_last, ` +
  `${firstState('zone_time_first')} AS zone_time_first, maxState(zone_time_last) AS zone_time_last`;

interface Aggregate {
  table: string;
  input: InputTable;
  /** Stored columns before the aggregate states. */
  columns: string[];
  states: string[];
  orderBy: string;
  /** Which shard of a cluster a row goes to: equal keys to one shard, so merges fold them there. */
  shardBy: string;
  /** The view's SELECT list after the key columns. */
  select: string;
  groupBy: string;
}

const AGGREGATES: Aggregate[] = [
  {
    table: 'rrsets', input: 'rrsets_in',
    columns: ['rrname_rev String', 'rrname String', 'rrtype UInt16', 'bailiwick String', 'rdata Array(String)', 'rdata_wire Array(String)'],
    states: SIGHTING_STATES,
    shardBy: 'cityHash64(rrname_rev)',
    orderBy: 'rrname_rev, rrtype, bailiwick, rdata_wire',
    select: `rrname_rev, any(rrname) AS rrname, rrtype, bailiwick, any(rdata) AS rdata, rdata_wire, ${SIGHTING_SELECT}`,
    groupBy: 'rrname_rev, rrtype, bailiwick, rdata_wire',
  },
  {
    table: 'flex_names', input: 'flex_names_in',
    columns: ['rrname String', 'rrtype UInt16'],
    states: ['first AggregateFunction(min, UInt32)', 'last AggregateFunction(max, UInt32)'],
    shardBy: 'cityHash64(rrname)',
    orderBy: 'rrname, rrtype',
    select: `rrname, rrtype, ${firstState('first')} AS first, maxState(last) AS last`,
    groupBy: 'rrname, rrtype',
  },
  {
    table: 'flex_rdata', input: 'flex_rdata_in',
    columns: ['rdata String', 'rrtype UInt16', 'rdata_wire String'],
    states: ['first AggregateFunction(min, UInt32)', 'last AggregateFunction(max, UInt32)'],
    shardBy: 'cityHash64(rdata)',
    orderBy: 'rdata, rrtype, rdata_wire',
    select: `rdata, rrtype, rdata_wire, ${firstState('first')} AS first, maxState(last) AS last`,
    groupBy: 'rdata, rrtype, rdata_wire',
  },
  {
    table: 'rdata_index', input: 'rdata_index_in',
    columns: ['kind UInt8', 'rdata_key String', 'rrtype UInt16', 'rrname_rev String', 'rrname String', 'rdata_name String',
      'rdata String', 'rdata_wire String', 'bailiwick String', 'rrset_id UInt64', 'rrset_rdata Array(String)'],
    states: SIGHTING_STATES,
    shardBy: 'cityHash64(rdata_key)',
    // One row per RRset holding the record (bailiwick and rrset_id, a digest of its record set, tell them apart):
    // aggr=false lists them one by one, as a shard does.
    orderBy: 'kind, rdata_key, rrtype, rrname_rev, rdata_wire, bailiwick, rrset_id',
    select: `kind, rdata_key, rrtype, rrname_rev, any(rrname) AS rrname, any(rdata_name) AS rdata_name, any(rdata) AS rdata, ` +
      `rdata_wire, bailiwick, rrset_id, any(rrset_rdata) AS rrset_rdata, ${SIGHTING_SELECT}`,
    groupBy: 'kind, rdata_key, rrtype, rrname_rev, rdata_wire, bailiwick, rrset_id',
  },
];

const ENGINE = 'AggregatingMergeTree';
const REPLICATED_ENGINE = `Replicated${ENGINE}`;

/**
 * The engine of an aggregating table. Replicated: its replicas meet at a
 * ZooKeeper path per shard, database and table ({shard} from the server's
 * macros; 18.16 has no {database} or {table} macro, so those are inlined),
 * each under its {replica} macro.
 */
function engine(t: SchemaTarget, table: string, base = ENGINE): string {
  if (t.replicated !== true) return `${base}()`;
  return `Replicated${base}(${sqlString(`/clickhouse/tables/{shard}/${t.database}/${table}`)}, '{replica}')`;
}

/**
 * What a server offers beyond 18.16 that the schema or the searches use,
 * asked of the server itself: the one place that decides by version.
 */
export interface ServerTraits {
  version: string;
  /**
   * The MergeTree setting allow_dimensions_outside_sorting_key exists (26.7
   * on): without it set, such a server refuses an AggregatingMergeTree with a
   * plain column outside the sorting key. rrsets and rdata_index keep texts
   * beside their keys (rrname beside rrname_rev, rdata beside rdata_wire)
   * that depend on the key, which is what the setting declares.
   */
  dimensionsSetting: boolean;
  /**
   * Data-skipping indexes, without experimental flags: the server lists them
   * in system.data_skipping_indices (21.x on; 18.16 has none, 19.x-20.x
   * only behind a flag, and are taken as having none).
   */
  skipIndexes: boolean;
}

/** The server's traits: small reads of system tables that 18.16 has too. */
export async function serverTraits(ch: ClickHouse): Promise<ServerTraits> {
  const version = await ch.version();
  const has = async (sql: string) => (await ch.exec(`${sql} FORMAT TabSeparated`)).trim() !== '';
  return {
    version,
    dimensionsSetting: await has("SELECT name FROM system.merge_tree_settings WHERE name = 'allow_dimensions_outside_sorting_key'"),
    skipIndexes: await has("SELECT name FROM system.tables WHERE database = 'system' AND name = 'data_skipping_indices'"),
  };
}

/**
 * The ngram skip index of the flex tables, where the server has skip
 * indexes: per granule, a bloom filter of the trigrams of the lower-cased
 * values. A flexible search adds `lower(value) LIKE '%tri%'` for the
 * trigrams every match must hold (query/regex-trigrams.ts, the analysis the
 * shards' trigram index answers), and the server skips the granules that
 * lack one; match() still decides every row, so answers are unchanged.
 * Granules of 1,024 rows instead of 8,192 (flex tables made on such a
 * server): a granule passes when it holds every needed trigram in any of
 * its rows, which fewer rows make rarer. Sizes chosen by
 * bench/clickhouse-fast-path.ts (schema.md has the figures).
 */
export const NGRAM_INDEX = {
  name: 'rrscan_ngrams',
  rowsPerGranule: 1024,
  /** Bloom filter bytes per row of a granule: 2 KiB for 1,024 rows, 16 KiB for a table made with 8,192. */
  bloomBytesPerRow: 2,
  /** The flex tables and their value columns. */
  tables: [['flex_names', 'rrname'], ['flex_rdata', 'rdata']],
} as const;

const isFlexTable = (table: string) => NGRAM_INDEX.tables.some(([t]) => t === table);

/** The indexed expression over a flex value column; search/clickhouse/flex-sql.ts writes its conditions on exactly this. */
export function ngramIndexed(column: string): string {
  return `lower(${column})`;
}

/** The flex tables of `database` that have the ngram index. */
async function ngramIndexedTables(ch: ClickHouse, database: string): Promise<Set<string>> {
  const rows = await ch.exec(`SELECT table FROM system.data_skipping_indices WHERE database = ${sqlString(database)} ` +
    `AND name = ${sqlString(NGRAM_INDEX.name)} FORMAT TabSeparated`);
  return new Set(rows.split('\n').filter((r) => r !== ''));
}

/** Rows per granule of a table: its own index_granularity, else the server's default. */
async function granularityOf(ch: ClickHouse, database: string, table: string): Promise<number> {
  const engine = await ch.exec(`SELECT engine_full FROM system.tables WHERE database = ${sqlString(database)} ` +
    `AND name = ${sqlString(table)} FORMAT TabSeparated`);
  const own = /\bindex_granularity = (\d+)/.exec(engine);
  if (own) return Number(own[1]);
  return Number(await ch.exec("SELECT value FROM system.merge_tree_settings WHERE name = 'index_granularity' FORMAT TabSeparated"));
}

/** Adds the ngram index to a flex table, and builds it for the rows already there (a mutation; on a new table, nothing). */
function ngramIndexStatements(database: string, table: string, column: string, granularity: number): string[] {
  const t = `${sqlIdentifier(database)}.${table}`;
  const type = `ngrambf_v1(3, ${sqlUInt(granularity * NGRAM_INDEX.bloomBytesPerRow)}, 2, 0)`;
  return [
    `ALTER TABLE ${t} ADD INDEX IF NOT EXISTS ${NGRAM_INDEX.name} ${ngramIndexed(column)} TYPE ${type} GRANULARITY 1`,
    `ALTER TABLE ${t} MATERIALIZE INDEX ${NGRAM_INDEX.name}`,
  ];
}

/** The SETTINGS of an aggregating table on this server; none on 18.16. */
function tableSettings(a: Aggregate, traits: ServerTraits): string {
  const settings: string[] = [];
  if (traits.dimensionsSetting && dimensions(a).length > 0) settings.push('allow_dimensions_outside_sorting_key = 1');
  if (traits.skipIndexes && isFlexTable(a.table)) settings.push(`index_granularity = ${NGRAM_INDEX.rowsPerGranule}`);
  return settings.length > 0 ? ` SETTINGS ${settings.join(', ')}` : '';
}

/** The plain columns of `a` outside its sorting key. */
function dimensions(a: Aggregate): string[] {
  const key = new Set(a.orderBy.split(',').map((c) => c.trim()));
  return a.columns.map((c) => c.split(' ')[0]!).filter((c) => !key.has(c));
}

/** The statements of `rrscan clickhouse init`, in the order they must run. */
export function schemaStatements(t: SchemaTarget, traits: ServerTraits): string[] {
  const db = sqlIdentifier(t.database);
  const out = [`CREATE DATABASE IF NOT EXISTS ${db}`];
  for (const a of AGGREGATES) {
    const inputCols = INPUT_COLUMNS[a.input].map(([n, type]) => `${n} ${type}`).join(', ');
    out.push(`CREATE TABLE IF NOT EXISTS ${db}.${a.input} (${inputCols}) ENGINE = Null`);
    out.push(`CREATE TABLE IF NOT EXISTS ${db}.${a.table} (${[...a.columns, ...a.states].join(', ')}) ` +
      `ENGINE = ${engine(t, a.table)} ORDER BY (${a.orderBy})${tableSettings(a, traits)}`);
    out.push(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${a.table}_mv TO ${db}.${a.table} ` +
      `AS SELECT ${a.select} FROM ${db}.${a.input} GROUP BY ${a.groupBy}`);
    if (t.cluster === undefined) continue;
    const cluster = sqlIdentifier(t.cluster);
    for (const table of [a.input, a.table]) {
      out.push(`CREATE TABLE IF NOT EXISTS ${db}.${table}${DISTRIBUTED_SUFFIX} AS ${db}.${table} ` +
        `ENGINE = Distributed(${cluster}, ${db}, ${table}, ${a.shardBy})`);
    }
  }
  return [...out, ...ledgerStatements(t)];
}

/** The input ledger's table (clickhouse/ledger.ts): one row per file and run and state, never merged away. */
export const LEDGER_TABLE = 'ingest_ledger';

/**
 * The input ledger (schema.md "Input ledger"). With a cluster, a Distributed
 * table over every shard's ledger, rows placed by the digest: a file's rows
 * all live on one shard and every node reads the one truth through it.
 * Replicated like the data: a read may go to any replica of the shard.
 */
function ledgerStatements(t: SchemaTarget): string[] {
  const db = sqlIdentifier(t.database);
  const out = [`CREATE TABLE IF NOT EXISTS ${db}.${LEDGER_TABLE} (sha256 String, run String, state UInt8, name String, ` +
    `bytes UInt64, at UInt64) ENGINE = ${engine(t, LEDGER_TABLE, 'MergeTree')} ORDER BY (sha256, run, state)`];
  if (t.cluster !== undefined) {
    out.push(`CREATE TABLE IF NOT EXISTS ${db}.${LEDGER_TABLE}${DISTRIBUTED_SUFFIX} AS ${db}.${LEDGER_TABLE} ` +
      `ENGINE = Distributed(${sqlIdentifier(t.cluster)}, ${db}, ${LEDGER_TABLE}, cityHash64(sha256))`);
  }
  return out;
}

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
  const want = t.replicated === true ? REPLICATED_ENGINE : ENGINE;
  const names = AGGREGATES.map((a) => sqlString(a.table)).join(', ');
  const rows = (await ch.exec(`SELECT name, engine FROM system.tables WHERE database = ${sqlString(t.database)} ` +
    `AND name IN (${names}) ORDER BY name FORMAT TabSeparated`)).split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
  const wrong = rows.filter(([, e]) => e !== want).map(([n, e]) => `${n} (${e})`);
  if (wrong.length > 0) {
    throw new ClickHouseError(`database ${t.database} already has ${wrong.join(', ')}, not ${want}: an earlier init made them ` +
      `${t.replicated === true ? 'without' : 'with'} --replicated; use another --database, or drop these tables first ${FIX_SEE}`);
  }
}
