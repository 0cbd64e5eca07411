// The input ledger of a ClickHouse database (clickhouse/ledger.ts): a file
// sent again is skipped once its ingest is done; an ingest killed with
// SIGKILL mid-file leaves it started without done, and the next run refuses
// that file (naming it and the remedy) while it ingests the others; --again
// sends it anyway; of two runs of one file at once, one sends it. On a
// private clickhouse-server (Debian's 18.16) and on ClickHouse 26.7's engine
// (chdb behind helpers/chdb-http.ts).

import { spawn } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse } from '../../src/clickhouse/client.js';
import { ClickHouseLedger } from '../../src/clickhouse/ledger.js';
import { CHDB_SKIP_REASON, HAVE_CHDB, startChdbHttp } from '../helpers/chdb-http.js';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseUnderTest } from '../helpers/clickhouse-server.js';
import { BIN, cli, tempPaths } from '../helpers/rrscan.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);
if (!HAVE_CHDB) console.warn(CHDB_SKIP_REASON);

const temp = tempPaths();
afterAll(temp.removeAll);

/** Over LIMITS.clickhouseInsertRowsMax (100,000) lines: a file of two batches, the first sent well before the end. */
const BIG_LINES = 150_000;
const T0 = 1_700_000_000;

function ndjson(file: string, from: number, to: number): string {
  const lines: string[] = [];
  for (let i = from; i < to; i++) {
    lines.push(JSON.stringify({ count: 1, time_first: T0 + i, time_last: T0 + i + 10, rrname: `h${i}.z${i % 89}.chledger.example.`,
      rrtype: 'A', bailiwick: 'chledger.example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`] }));
  }
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** The releases the ledger's SQL runs on: Debian's 18.16, and 26.7's engine through chdb-http (requests one at a time). */
const RELEASES = [
  { release: "Debian's clickhouse-server", have: HAVE_CLICKHOUSE, start: (): Promise<ClickHouseUnderTest> => startClickHouse() },
  { release: 'ClickHouse 26.7 through chdb', have: HAVE_CHDB, start: (): Promise<ClickHouseUnderTest> => startChdbHttp() },
];

for (const { release, have, start } of RELEASES) describe.skipIf(!have)(`the ClickHouse input ledger on ${release}`, () => {
  let ch: ClickHouseUnderTest;
  let client: ClickHouse;
  let src: string;
  const sum = async (): Promise<number> =>
    Number(await client.exec("SELECT sum(c) FROM (SELECT sumMerge(count) AS c FROM rrscan.rrsets WHERE bailiwick = 'chledger.example.')"));
  /** The ledger's rows of one file name: state and rows, by state. */
  const ledgerRows = async (file: string): Promise<string> =>
    (await client.exec(`SELECT state, count() FROM rrscan.ingest_ledger WHERE name = '${file}' GROUP BY state ORDER BY state ` +
      'FORMAT TabSeparated'));
  const skipLine = (file: string) =>
    new RegExp(`^rrscan ingest: ${file}: already ingested \\(sha256 [0-9a-f]{12}…, ClickHouse database rrscan, ` +
      '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\\); skipped\\n$');

  beforeAll(async () => {
    ch = await start();
    client = new ClickHouse(ch.url);
    src = temp.fresh();
    const r = cli(['clickhouse', 'init', '--url', ch.url]);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await ch?.close();
  });

  it('a file sent again (or a copy of it) is skipped with one stderr line, exit 0, nothing sent', async () => {
    const a = ndjson(path.join(src, 'a.ndjson'), 0, 100);
    const first = cli(['ingest', '--clickhouse-url', ch.url, a]);
    expect(first.code, first.stderr).toBe(0);
    expect(await sum()).toBe(100);
    expect(await ledgerRows(a)).toBe('1\t1\n2\t1\n');
    const copy = path.join(temp.fresh(), 'copy.ndjson');
    copyFileSync(a, copy);
    for (const f of [a, copy]) {
      const again = cli(['ingest', '--clickhouse-url', ch.url, f]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(skipLine(f));
      expect(again.stdout).toMatch(/^ingest: 1 file\(s\) \(1 skipped: already ingested\), 0 records read/);
    }
    expect(await sum()).toBe(100);
  });

  it('an ingest killed mid-file: the next run refuses that file, ingests the others, exits 1; --again sends it', async () => {
    const big = ndjson(path.join(src, 'big.ndjson'), 1_000, 1_000 + BIG_LINES);
    const other = ndjson(path.join(src, 'other.ndjson'), 500_000, 500_010);
    const before = await sum();
    const proc = spawn(process.execPath, [BIN, 'ingest', '--clickhouse-url', ch.url, big], { stdio: 'ignore' });
    const exited = new Promise((r) => proc.once('exit', r));
    // Killed once the file is recorded as started and its first batch is in: its rows are partly there.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !((await ledgerRows(big)) === '1\t1\n' && (await sum()) > before)) {
      await new Promise((r) => setTimeout(r, 10));
    }
    proc.kill('SIGKILL');
    await exited;
    expect(await ledgerRows(big)).toBe('1\t1\n');
    const partial = (await sum()) - before;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(BIG_LINES);

    const next = cli(['ingest', '--clickhouse-url', ch.url, big, other]);
    expect(next.code).toBe(1);
    expect(next.stdout).toMatch(/^ingest: 2 file\(s\), 10 records read/);
    expect(next.stderr).toMatch(new RegExp(`^rrscan ingest: ${big}: an ingest of it into ClickHouse started at ` +
      '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z and has not finished \\(it died, or still runs\\), so some of its rows may be there ' +
      '\\(refused: sending it again would count ' +
      'those twice\\); give --again to ingest it anyway, or leave it out\\n$'));
    expect(await sum()).toBe(before + partial + 10);

    const again = cli(['ingest', '--clickhouse-url', ch.url, '--again', big]);
    expect(again.code, again.stderr).toBe(0);
    // The partial rows stay: --again adds the whole file on top of them.
    expect(await sum()).toBe(before + partial + 10 + BIG_LINES);
    expect(await ledgerRows(big)).toBe('1\t2\n2\t1\n');
    const skipped = cli(['ingest', '--clickhouse-url', ch.url, big]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toMatch(skipLine(big));
  }, 120_000);

  it('two ingests of one file at once: it is sent once; the other run skips or refuses it', async () => {
    const file = ndjson(path.join(src, 'race.ndjson'), 700_000, 720_000);
    const before = await sum();
    const run = () => new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [BIN, 'ingest', '--clickhouse-url', ch.url, file], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      p.once('close', (code) => resolve({ code, stderr }));
    });
    const results = await Promise.all([run(), run()]);
    expect(await sum()).toBe(before + 20_000);
    const winners = results.filter((r) => r.code === 0 && r.stderr === '');
    expect(winners, JSON.stringify(results)).toHaveLength(1);
    const loser = results.find((r) => r !== winners[0])!;
    console.log(`the other run: exit ${String(loser.code)}, ${loser.stderr.trim()}`);
    expect(loser.stderr).toMatch(new RegExp(`^rrscan ingest: ${file}: (already ingested \\(sha256 [0-9a-f]{12}…, (ClickHouse database ` +
      'rrscan, \\S+Z|being ingested into ClickHouse database rrscan by another run)\\); skipped|an ingest of it into ClickHouse ' +
      'started at \\S+ and has not finished)'));
    const again = cli(['ingest', '--clickhouse-url', ch.url, file]);
    expect(again.stderr).toMatch(skipLine(file));
  }, 60_000);

  it('two runs both past the check (the race window): claim() lets exactly the first send it; reads ignore the other', async () => {
    // A name with a quote and a backslash: inlined through literal.ts into VALUES, read back from TabSeparated.
    const input = { sha256: 'f'.repeat(64), name: "/race/it's\\window", bytes: 1 };
    const [x, y] = await Promise.all([ClickHouseLedger.open(client, 'rrscan'), ClickHouseLedger.open(client, 'rrscan')]);
    expect(await Promise.all([x.state(input.sha256), y.state(input.sha256)])).toEqual([undefined, undefined]);
    await x.started(input);
    // Start times are milliseconds: y starts strictly later (equal ones are ordered by the runs' random ids).
    await new Promise((r) => setTimeout(r, 5));
    await y.started(input);
    expect(await Promise.all([y.claim(input), x.claim(input)])).toEqual([false, true]);
    expect(await y.state(input.sha256)).toMatchObject({ state: 'started', name: input.name });
    await x.done(input);
    expect(await y.state(input.sha256)).toMatchObject({ state: 'done' });
    expect(await client.exec(`SELECT run = '${y.run}', groupArray(state) FROM (SELECT * FROM rrscan.ingest_ledger ` +
      `WHERE sha256 = '${input.sha256}' ORDER BY at, state) GROUP BY run ORDER BY run = '${y.run}' FORMAT TabSeparated`))
      .toBe('0\t[1,2]\n1\t[1,3]\n');
  });

  it('a database made by an init without the ledger: ingest says to run init again', async () => {
    await client.exec('CREATE DATABASE IF NOT EXISTS old');
    const r0 = cli(['clickhouse', 'init', '--url', ch.url, '--database', 'old']);
    expect(r0.code, r0.stderr).toBe(0);
    await client.exec('DROP TABLE old.ingest_ledger');
    const f = ndjson(path.join(src, 'old.ndjson'), 0, 5);
    const r = cli(['ingest', '--clickhouse-url', ch.url, '--clickhouse-database', 'old', f]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rrscan ingest: ${ch.url}: no input ledger in database old (run \`rrscan clickhouse init\` again: ` +
      'it adds the tables that are missing); batches sent before the failure stay in ClickHouse (the next run refuses a file ' +
      'left unfinished, until --again)\n');
  });
});
