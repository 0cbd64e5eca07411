// The ClickHouse tier as a cluster: two private servers (127.0.0.1 and
// 127.0.0.2) as two shards of cluster rrscan_test, `clickhouse init
// --cluster` on each (their own tables plus Distributed ones over both),
// one ingest through the first, and two `rrscan serve` front ends, one on
// each server, the second a group of two processes (`--processes 2`).
// Generated flexible and standard searches get byte for byte the local
// shards' answers from both front ends and both members of the group, the
// rows are really spread over both shards, and a shard that is down fails
// searches with an in-stream `failed`, never a partial answer, and makes
// /readyz say so.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse } from '../../src/clickhouse/client.js';
import { differentialData, flexPaths, lookupPaths } from '../fixtures/differential-dataset.js';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import {
  CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouseCluster, type ClickHouseServer,
} from '../helpers/clickhouse-server.js';
import { ingestBoth, ndjsonFilesBeside } from '../helpers/differential.js';
import {
  addKey, begin, body, cli, cliOk, get, removeDir, requestsByMember, startServer, tempDir, type Server,
} from '../helpers/rrscan.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);

const CLUSTER = 'rrscan_test';
const SEED = 16;
const QUERIES = 150;

describe.skipIf(!HAVE_CLICKHOUSE)('a ClickHouse cluster of two shards answers as the local shards do', () => {
  let nodes: ClickHouseServer[] = [];
  let dir: string;
  let files: string[] = [];
  let key: string;
  let local: Server;
  let fronts: Server[] = [];
  const data = differentialData(2_000, SEED);
  const H = () => ({ 'X-API-Key': key });

  beforeAll(async () => {
    nodes = await startClickHouseCluster(CLUSTER, 2);
    dir = tempDir();
    files = ndjsonFilesBeside(dir, [...data.files, FLEX_FIXTURE]);
    for (const n of nodes) cliOk(['clickhouse', 'init', '--url', n.url, '--cluster', CLUSTER]);
    for (const f of files) {
      ingestBoth(dir, nodes[0]!.url, f);
    }
    key = addKey(dir, ['--unlimited']);
    [local, ...fronts] = await Promise.all([
      startServer(dir),
      startServer(dir, ['--clickhouse-url', nodes[0]!.url, '--metrics-port', '0']),
      startServer(dir, ['--clickhouse-url', nodes[1]!.url, '--processes', '2', '--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([local?.close(), ...fronts.map((f) => f.close())]);
    await Promise.all(nodes.map((n) => n.close()));
    if (dir !== undefined) removeDir(dir);
    for (const f of files) removeDir(f);
  });

  it('spreads the rows over both shards', async () => {
    const counts = await Promise.all(nodes.map(async (n) => {
      const c = new ClickHouse(n.url);
      const rows = Number(await c.exec('SELECT count() FROM rrscan.rrsets'));
      c.close();
      return rows;
    }));
    for (const rows of counts) expect(rows).toBeGreaterThan(500);
  });

  it(`${QUERIES} flexible and ${QUERIES} standard searches: both front ends answer as the local shards`, async () => {
    const paths = [...flexPaths(data, QUERIES, SEED), ...lookupPaths(data, QUERIES, SEED)];
    const differ: string[] = [];
    for (let i = 0; i < paths.length; i += 8) {
      await Promise.all(paths.slice(i, i + 8).map(async (p, k) => {
        const want = await get(local, `/pdns/v2/${p}`, H());
        const got = await get(fronts[(i + k) % 2]!, `/pdns/v2/${p}`, H());
        if (got.status !== want.status || got.body !== want.body) differ.push(`${p}\n--- local\n${want.body}--- cluster\n${got.body}`);
      }));
    }
    expect(differ).toEqual([]);
    const byMember = requestsByMember(fronts[1]!);
    expect(byMember.get(0), 'member 0 of the group answered none').toBeGreaterThan(0);
    expect(byMember.get(1), 'member 1 of the group answered none').toBeGreaterThan(0);
  }, 120_000);

  it('one input ledger for the cluster: a file sent through one node is skipped through the other; its rows on one shard', async () => {
    const rows = () => Promise.all(nodes.map(async (n) => {
      const c = new ClickHouse(n.url);
      const count = async (t: string) => Number(await c.exec(`SELECT count() FROM rrscan.${t}`));
      const [ledger, rrsets] = await Promise.all([count('ingest_ledger'), count('rrsets')]);
      c.close();
      return { ledger, rrsets };
    }));
    const before = await rows();
    // started and done for every file, each file's two rows on the one shard its digest picks.
    expect(before.reduce((n, r) => n + r.ledger, 0)).toBe(2 * files.length);
    for (const f of files) {
      const perNode = await Promise.all(nodes.map(async (n) => {
        const c = new ClickHouse(n.url);
        const rows = Number(await c.exec(`SELECT count() FROM rrscan.ingest_ledger WHERE name = '${f}'`));
        c.close();
        return rows;
      }));
      expect(perNode.sort(), f).toEqual([0, 2]);
    }
    for (const n of nodes) {
      const r = cli(['ingest', '--clickhouse-url', n.url, ...files]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr.split('\n').filter((l) => / already ingested \(sha256 [0-9a-f]{12}…, ClickHouse database rrscan, /.test(l)))
        .toHaveLength(files.length);
    }
    expect(await rows()).toEqual(before);
  }, 60_000);

  it('a shard down: searches on the front ends end failed, and /readyz says why', async () => {
    const readyz = () => get({ port: fronts[0]!.metricsPort! }, '/readyz');
    expect([(await readyz()).status, (await readyz()).body]).toEqual([200, 'ready\n']);
    await nodes[1]!.close();
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/^not ready: ClickHouse unreachable: Code: \d+, .*127\.0\.0\.2.*\n$/);
    for (const p of ['regex/rrnames/paypal', 'lookup/rrset/name/*.example.com', 'lookup/rdata/ip/192.0.2.0,24']) {
      for (const front of fronts) {
        const r = await get(front, `/pdns/v2/${p}`, H());
        expect(r.status).toBe(200);
        expect(r.body).toBe(body(begin, { cond: 'failed', msg: 'Internal error' }));
      }
    }
    // The ledger cannot be read whole: ingest fails rather than take a file for new.
    const r = cli(['ingest', '--clickhouse-url', nodes[0]!.url, files[0]!]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^rrscan ingest: .*Code: \d+.*; batches sent before the failure stay in ClickHouse \(the next run refuses /s);
    expect(r.stderr.endsWith('a file left unfinished, until --again)\n')).toBe(true);
  }, 60_000);
});
