// The ngram skip index of the flex tables (clickhouse/schema.ts NGRAM_INDEX)
// against none, on the same names: for each flexible query class, the rows
// ClickHouse reads and the best wall time of the SELECT that rrscan sends
// (search/clickhouse/flex-sql.ts), three ways:
//   plain          no index, no trigram conditions (18.16's path);
//   conds, no idx  the trigram conditions on a table without the index (what
//                  adding them everywhere would cost; why serve adds them only
//                  where findTables finds the index);
//   index          the index and its conditions (26.x's path).
// The answers of all three are compared: they must be identical.
//
//   node dist/bench/clickhouse-fast-path.js [--names 1000000] [--runs 5] [--clickhouse-url URL]
//
// Without --clickhouse-url it runs ClickHouse 26.7's engine through
// test/helpers/chdb-http.ts. Tables go to databases fp_plain_<names> and
// fp_index_<names> (kept on a given server for reruns; chdb-http's scratch
// directory goes at the end). Rows read come
// from ClickHouse's own statistics (FORMAT JSON); wall time is measured here;
// the query condition cache is off where the server has one.

import { ClickHouse } from '../src/clickhouse/client.js';
import { NGRAM_INDEX, type Tables } from '../src/clickhouse/schema.js';
import { initSchema } from '../src/clickhouse/schema-init.js';
import { serverTraits } from '../src/clickhouse/server-traits.js';
import { findTables } from '../src/clickhouse/tables.js';
import { flexSql } from '../src/search/clickhouse/flex-sql.js';
import { parseFlexQuery } from '../src/query/flex-query.js';
import { startChdbHttp, type ChdbHttp } from '../test/helpers/chdb-http.js';
import { arg, fmt } from './common.js';
import { benchNames } from './names.js';

const names = Number(arg('names', '1000000'));
const runs = Number(arg('runs', '5'));
const given = arg('clickhouse-url', '');
/** Rows per INSERT while loading. */
const BATCH = 200_000;
/** Values asked for: limit 1000 + 1 (answers come back whole through ClickHouse.exec, which bounds them at 1 MiB). */
const WANT = 1_001;

const QUERIES: { name: string; segments: string[] }[] = [
  { name: 'selective', segments: ['regex', 'rrnames', '^(.*\\.)?paypal[^.]*\\.com\\.$'] },
  { name: 'substring', segments: ['regex', 'rrnames', 'paypal'] },
  { name: 'leading wildcard', segments: ['regex', 'rrnames', '.*-login\\..*'] },
  { name: 'class-heavy', segments: ['regex', 'rrnames', '^[a-z0-9]{30,}\\.'] },
  { name: 'match-all', segments: ['regex', 'rrnames', '.'] },
  { name: 'alternation', segments: ['regex', 'rrnames', 'paypal|amazon'] },
  { name: 'two literals', segments: ['regex', 'rrnames', 'secure.*account'] },
  { name: 'glob', segments: ['glob', 'rrnames', '*apple-id*'] },
  { name: 'absent literal', segments: ['regex', 'rrnames', 'zzqx'] },
  { name: 'short literal', segments: ['regex', 'rrnames', 'cdn'] },
];

interface Run {
  rowsRead: number;
  ms: number;
  data: string;
}

/**
 * Settings for every timed SELECT: 25.x on remembers which granules a condition held in (the query condition
 * cache), so a repeated query would read almost nothing whatever the index; off, each run reads as a new query would.
 */
let measureSettings: Record<string, string> = {};

async function timed(ch: ClickHouse, sql: string): Promise<Run> {
  const json = sql.replace(/ FORMAT TabSeparated$/, ' FORMAT JSON');
  let best = Infinity;
  let answer = { data: [] as unknown[], statistics: { rows_read: 0 } };
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    answer = JSON.parse(await ch.exec(json, undefined, measureSettings)) as typeof answer;
    best = Math.min(best, performance.now() - t0);
  }
  return { rowsRead: answer.statistics.rows_read, ms: best, data: JSON.stringify(answer.data) };
}

async function load(ch: ClickHouse, database: string, index: boolean): Promise<Tables> {
  const exists = (await ch.exec(`SELECT name FROM system.tables WHERE database = '${database}' AND name = 'flex_names' ` +
    'FORMAT TabSeparated')).trim() !== '';
  if (!exists) {
    await initSchema(ch, { database });
    if (!index && (await findTables(ch, database)).ngramIndex) {
      for (const [table] of NGRAM_INDEX.tables) await ch.exec(`ALTER TABLE ${database}.${table} DROP INDEX ${NGRAM_INDEX.name}`);
    }
    const t0 = performance.now();
    let rows: string[] = [];
    let i = 0;
    const flush = async () => {
      await ch.exec(`INSERT INTO ${database}.flex_names_in FORMAT TabSeparated`, Buffer.from(rows.join(''), 'latin1'));
      rows = [];
    };
    for (const n of benchNames(names)) {
      rows.push(`${n}\t1\t${1_300_000_000 + (i % 100_000_000)}\t${1_700_000_000 + (i % 60_000_000)}\n`);
      if (++i % BATCH === 0) await flush();
    }
    if (rows.length > 0) await flush();
    await ch.exec(`OPTIMIZE TABLE ${database}.flex_names FINAL`);
    console.log(`${database}: ${names} names loaded and merged in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  }
  const sizes = await ch.exec('SELECT sum(data_compressed_bytes), sum(marks) FROM system.parts ' +
    `WHERE database = '${database}' AND table = 'flex_names' AND active FORMAT TabSeparated`);
  console.log(`${database}: flex_names ${sizes.trim().replace('\t', ' bytes compressed, ')} granules`);
  return findTables(ch, database);
}

async function main(): Promise<void> {
  console.log(`node dist/bench/clickhouse-fast-path.js --names ${names} --runs ${runs}` +
    `${given !== '' ? ` --clickhouse-url ${given}` : ''}`);
  let engine: ChdbHttp | undefined;
  if (given === '') engine = await startChdbHttp();
  const ch = new ClickHouse(given !== '' ? given : engine!.url);
  try {
    const traits = await serverTraits(ch);
    console.log(`ClickHouse ${traits.version}${engine ? ' (chdb)' : ''}; skip indexes: ${traits.skipIndexes ? 'yes' : 'no'}; ` +
      `best of ${runs} runs`);
    if ((await ch.exec("SELECT name FROM system.settings WHERE name = 'use_query_condition_cache' FORMAT TabSeparated")) !== '') {
      measureSettings = { use_query_condition_cache: '0' };
    }
    const plain = await load(ch, `fp_plain_${names}`, false);
    const indexed = traits.skipIndexes ? await load(ch, `fp_index_${names}`, true) : undefined;
    if (traits.skipIndexes) {
      const index = await ch.exec('SELECT expr, type_full, data_compressed_bytes FROM system.data_skipping_indices ' +
        `WHERE database = 'fp_index_${names}' AND table = 'flex_names' AND name = '${NGRAM_INDEX.name}' FORMAT TabSeparated`);
      console.log(`index on flex_names: ${index.trim().replace(/\t/g, ' ')} bytes compressed`);
    }
    console.log('query | results | plain: rows read, ms | conds, no idx: rows read, ms | index: rows read, ms | same answers');
    for (const q of QUERIES) {
      const fq = parseFlexQuery(q.segments, new Map(), Math.floor(Date.now() / 1000));
      const a = await timed(ch, flexSql(fq, fq.fence, WANT, { ...plain, ngramIndex: false }));
      const b = await timed(ch, flexSql(fq, fq.fence, WANT, { ...plain, ngramIndex: true }));
      const c = indexed ? await timed(ch, flexSql(fq, fq.fence, WANT, indexed)) : undefined;
      const results = (JSON.parse(a.data) as unknown[]).length;
      const same = a.data === b.data && (c === undefined || c.data === a.data);
      console.log(`${q.name} \`${q.segments.join('/')}\` | ${results} | ${a.rowsRead}, ${fmt(a.ms)} | ${b.rowsRead}, ${fmt(b.ms)} | ` +
        `${c ? `${c.rowsRead}, ${fmt(c.ms)}` : 'n/a'} | ${same ? 'yes' : 'NO'}`);
    }
  } finally {
    ch.close();
    await engine?.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
