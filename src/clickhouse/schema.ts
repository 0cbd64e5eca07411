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
//
// This file holds the statements and the names they create; finding the
// tables of a database is tables.ts, and what `init` checks before running
// the statements is schema-init.ts.

import { sqlIdentifier, sqlString, sqlUInt } from './literal.js';
import type { ServerTraits } from './server-traits.js';

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

/** The tables whose engine an earlier init chose for good (schema-init.ts checks them against aggregatingEngine). */
export const AGGREGATING_TABLES: readonly string[] = AGGREGATES.map((a) => a.table);

/** The engine of the aggregating tables of `t`. */
export function aggregatingEngine(t: SchemaTarget): string {
  return t.replicated === true ? REPLICATED_ENGINE : ENGINE;
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

/** Adds the ngram index to a flex table, and builds it for the rows already there (a mutation; on a new table, nothing). */
export function ngramIndexStatements(database: string, table: string, column: string, granularity: number): string[] {
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
