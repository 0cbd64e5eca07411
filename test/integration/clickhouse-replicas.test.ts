// The ClickHouse tier with replicas: a private ZooKeeper and four private
// servers as two shards of two replicas each (cluster rrscan_test,
// internal_replication on), `clickhouse init --replicated --cluster` on
// every replica, ingest through a Distributed table on one of them, and an
// `rrscan serve` on that one against one on local shards of the same files.
//
// Two shards, not one: the front end's server reads its own shard locally,
// so only a shard of other servers makes the Distributed table choose among
// replicas, which is what a replica down must survive. Killed replicas are
// the other shard's.
//
// Checked: every replica of a shard holds the same rows (SYSTEM SYNC
// REPLICA); equal INSERT blocks are both counted; generated searches answer
// byte for byte as the local shards, with all replicas up, with one of the
// other shard killed -9 (and ingest going on meanwhile), and, after it is
// started again and has caught up, with the other one killed; with both
// down, searches end with the in-stream `failed`. The input ledger is
// replicated too: the restarted replica knows the file sent while it was
// down. Also: init again changes
// nothing, and init refuses, naming the fix, a server without ZooKeeper,
// with its ZooKeeper down, without macros, or whose tables an init without
// --replicated made.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse } from '../../src/clickhouse/client.js';
import { freePort } from '../../src/lib/free-port.js';
import { differentialData, flexPaths, lookupPaths } from '../fixtures/differential-dataset.js';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import {
  CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, startReplicatedCluster, zookeeperConfig, type ClickHouseServer,
} from '../helpers/clickhouse-server.js';
import { differences, ingestBoth as ingestInto, ndjsonFilesBeside } from '../helpers/differential.js';
import { addKey, begin, body, cli, get, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';
import { HAVE_ZOOKEEPER, startZooKeeper, ZOOKEEPER_SKIP_REASON, type ZooKeeperServer } from '../helpers/zookeeper-server.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);
if (!HAVE_ZOOKEEPER) console.warn(ZOOKEEPER_SKIP_REASON);

const CLUSTER = 'rrscan_test';
const DATABASE = 'rrscan';
const TABLES = ['rrsets', 'flex_names', 'flex_rdata', 'rdata_index'];
const SEED = 17;
const QUERIES = 120;
/** How long a replica started again may take to rejoin: its old ZooKeeper session (3 s here) must expire first. */
const REJOIN_MS = 60_000;
const FIX_SEE = '(src/clickhouse/schema.md, Clusters)';

/** The same sighting twice, in two files that differ in their bytes only: their INSERT blocks are equal. */
const TWICE = { rrname: 'twice.replicas.test.', rrtype: 'A', rdata: ['203.0.113.77'], count: 3, time_first: 1500000000,
  time_last: 1500000100 };
const TWICE_REORDERED = { time_last: TWICE.time_last, time_first: TWICE.time_first, count: TWICE.count, rdata: TWICE.rdata,
  rrtype: TWICE.rrtype, rrname: TWICE.rrname };

/**
 * A digest of what a table holds, whatever its parts and merges: its rows
 * with equal keys merged (FINAL), the aggregate states finalized, hashed
 * and summed. Equal on two replicas when they hold the same data.
 */
async function digest(ch: ClickHouse, table: string): Promise<string> {
  const columns = (await ch.exec(`SELECT name, type FROM system.columns WHERE database = '${DATABASE}' AND table = '${table}' ` +
    'FORMAT TabSeparated')).trim().split('\n').map((l) => l.split('\t'));
  const values = columns.map(([name, type]) => (type!.startsWith('AggregateFunction') ? `finalizeAggregation(${name})` : name));
  return (await ch.exec(`SELECT count(), sum(cityHash64(${values.join(', ')})) FROM ${DATABASE}.${table} FINAL`)).trim();
}

/** Each table's digest on one server, once it has caught up with its shard's replication log. */
async function digests(node: ClickHouseServer): Promise<string[]> {
  const ch = new ClickHouse(node.url);
  try {
    for (const t of TABLES) await ch.exec(`SYSTEM SYNC REPLICA ${DATABASE}.${t}`);
    return await Promise.all(TABLES.map((t) => digest(ch, t)));
  } finally {
    ch.close();
  }
}

/** Waits until a replica started again takes part (not read-only, every replica of its shard active). */
async function rejoined(node: ClickHouseServer): Promise<number> {
  const ch = new ClickHouse(node.url);
  const t0 = performance.now();
  try {
    const waiting = () => ch.exec(`SELECT count() FROM system.replicas WHERE database = '${DATABASE}' ` +
      'AND (is_readonly OR active_replicas < total_replicas)');
    while ((await waiting()).trim() !== '0') {
      if (performance.now() - t0 > REJOIN_MS) throw new Error(`replica at ${node.url} did not rejoin: ${node.errors().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return performance.now() - t0;
  } finally {
    ch.close();
  }
}

describe.skipIf(!HAVE_CLICKHOUSE || !HAVE_ZOOKEEPER)('ClickHouse replicas: two shards of two replicas', () => {
  let zk: ZooKeeperServer;
  /** [shard][replica] */
  let nodes: ClickHouseServer[][] = [];
  let dir: string;
  let files: string[] = [];
  let key: string;
  let local: Server;
  let front: Server;
  let version: string;
  const data = differentialData(2_000, SEED);
  const H = () => ({ 'X-API-Key': key });
  const ingestBoth = (file: string): void => ingestInto(dir, nodes[0]![0]!.url, file);
  const init = (node: ClickHouseServer, flags = ['--replicated', '--cluster', CLUSTER]) =>
    cli(['clickhouse', 'init', '--url', node.url, ...flags]);
  const paths = (seed: number) => [...flexPaths(data, QUERIES, seed), ...lookupPaths(data, QUERIES, seed)];

  beforeAll(async () => {
    const t0 = performance.now();
    zk = await startZooKeeper();
    const t1 = performance.now();
    nodes = await startReplicatedCluster(CLUSTER, 2, 2, zk.port);
    console.log(`zookeeper started in ${(t1 - t0).toFixed(0)} ms; four clickhouse-servers in ${(performance.now() - t1).toFixed(0)} ms`);
    const ch = new ClickHouse(nodes[0]![0]!.url);
    version = await ch.version();
    ch.close();
    dir = tempDir();
    files = ndjsonFilesBeside(dir, [data.files[0], FLEX_FIXTURE, data.files[1], [TWICE], [TWICE_REORDERED]]);
    for (const n of nodes.flat()) {
      const r = init(n);
      if (r.code !== 0) throw new Error(`init on ${n.url} failed (${r.code}): ${r.stderr}`);
    }
    // files[2] goes in while a replica is down (below).
    for (const f of [files[0]!, files[1]!, files[3]!, files[4]!]) ingestBoth(f);
    key = addKey(dir, ['--unlimited']);
    [local, front] = await Promise.all([startServer(dir), startServer(dir, ['--clickhouse-url', nodes[0]![0]!.url])]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([local?.close(), front?.close()]);
    await Promise.all(nodes.flat().map((n) => n.close()));
    await zk?.close();
    if (dir !== undefined) removeDir(dir);
    for (const f of files) removeDir(f);
  });

  it('init made replicated tables on every replica; init again changes nothing', async () => {
    const stdout = (n: ClickHouseServer) => `clickhouse init: database ${DATABASE} ready on ClickHouse ${version} at ${n.url} (replicated)\n`;
    // 18.16's system.clusters has no internal_replication column: init says what it could not check.
    const stderr = version.startsWith('18.')
      ? `rrscan clickhouse init: warning: ClickHouse ${version} does not show internal_replication (system.clusters), so init ` +
        `cannot check it: set <internal_replication>true</internal_replication> in each <shard> of cluster ${CLUSTER} in ` +
        `remote_servers, or every row is counted once per replica ${FIX_SEE}\n`
      : '';
    const before = await Promise.all(nodes.flat().map(digests));
    for (const n of nodes.flat()) {
      expect(init(n)).toEqual({ code: 0, stdout: stdout(n), stderr });
      const ch = new ClickHouse(n.url);
      const engines = await ch.exec(`SELECT name, engine_full FROM system.tables WHERE database = '${DATABASE}' AND name = 'rrsets'`);
      ch.close();
      expect(engines).toMatch(/^rrsets\tReplicatedAggregatingMergeTree\(\\'\/clickhouse\/tables\/\{shard\}\/rrscan\/rrsets\\', \\'\{replica\}\\'\)/);
      const ledger = new ClickHouse(n.url);
      expect(await ledger.exec(`SELECT engine FROM system.tables WHERE database = '${DATABASE}' AND name = 'ingest_ledger'`))
        .toBe('ReplicatedMergeTree\n');
      ledger.close();
    }
    expect(await Promise.all(nodes.flat().map(digests))).toEqual(before);
  });

  it('init without --replicated refuses the replicated tables, naming the fix', () => {
    expect(init(nodes[0]![0]!, ['--cluster', CLUSTER])).toEqual({
      code: 1, stdout: '',
      stderr: `rrscan clickhouse init: database ${DATABASE} already has flex_names (ReplicatedAggregatingMergeTree), flex_rdata ` +
        '(ReplicatedAggregatingMergeTree), rdata_index (ReplicatedAggregatingMergeTree), rrsets (ReplicatedAggregatingMergeTree), ' +
        'not AggregatingMergeTree: an earlier init made them with --replicated; use another --database, or drop these tables ' +
        `first ${FIX_SEE}\n`,
    });
  });

  it('init --replicated refuses a server without ZooKeeper, with its ZooKeeper down, or without shard and replica macros, ' +
    'naming the fix', async () => {
    const plain = await startClickHouse();
    const noMacros = await startClickHouse(undefined, zookeeperConfig(zk.port));
    const zkDown = await startClickHouse(undefined, zookeeperConfig(await freePort()));
    try {
      expect(cli(['clickhouse', 'init', '--url', plain.url, '--replicated'])).toEqual({
        code: 1, stdout: '',
        stderr: `rrscan clickhouse init: --replicated: ClickHouse at ${plain.url} has no ZooKeeper, which replicated tables ` +
          `need: add a <zookeeper> section naming your ZooKeeper servers to its config.xml and restart it ${FIX_SEE}\n`,
      });
      expect(cli(['clickhouse', 'init', '--url', noMacros.url, '--replicated'])).toEqual({
        code: 1, stdout: '',
        stderr: `rrscan clickhouse init: --replicated: ClickHouse at ${noMacros.url} has no shard and replica macro, which the ` +
          "replicated tables' ZooKeeper paths use: add <macros><shard>SHARD</shard><replica>REPLICA</replica></macros> to its " +
          'config.xml (the same shard on every replica of a shard, a replica name of its own on each) and restart it ' +
          `${FIX_SEE}\n`,
      });
      const down = cli(['clickhouse', 'init', '--url', zkDown.url, '--replicated']);
      expect(down).toMatchObject({ code: 1, stdout: '' });
      // ClickHouse's own words follow (18.16: "Code: 999, ... All connection tries failed while connecting to ZooKeeper").
      expect(down.stderr).toMatch(new RegExp(`^rrscan clickhouse init: --replicated: ClickHouse at ${zkDown.url} cannot reach its ` +
        'ZooKeeper: Code: 999\\b.*Connection refused', 's'));
      for (const n of [plain, noMacros, zkDown]) {
        const ch = new ClickHouse(n.url);
        expect((await ch.exec(`SELECT count() FROM system.tables WHERE database = '${DATABASE}'`)).trim()).toBe('0');
        ch.close();
      }
    } finally {
      await Promise.all([plain.close(), noMacros.close(), zkDown.close()]);
    }
  }, 60_000);

  it('both replicas of each shard hold that shard\'s rows', async () => {
    const [s1, s2] = await Promise.all(nodes.map((replicas) => Promise.all(replicas.map(digests))));
    expect(s1![1]).toEqual(s1![0]);
    expect(s2![1]).toEqual(s2![0]);
    expect(s2![0]).not.toEqual(s1![0]);
    for (const d of [...s1![0]!, ...s2![0]!]) expect(Number(d.split('\t')[0])).toBeGreaterThan(100);
  }, 60_000);

  it('the same sighting in two files (equal INSERT blocks) is counted twice, as on local shards', async () => {
    const p = ['lookup/rrset/name/twice.replicas.test', 'lookup/rdata/ip/203.0.113.77', 'regex/rrnames/%5Etwice%5C.replicas'];
    expect(await differences(local, front, p, H())).toEqual([]);
    expect((await get(front, `/pdns/v2/${p[0]!}`, H())).body).toContain('"count":6,');
  });

  it(`${QUERIES} flexible and ${QUERIES} standard searches answer as the local shards`, async () => {
    expect(await differences(local, front, paths(SEED), H())).toEqual([]);
  }, 120_000);

  it('a replica of the other shard killed -9: the same answers, ingest goes on', async () => {
    await nodes[1]![0]!.stop();
    expect(await differences(local, front, paths(SEED + 1), H())).toEqual([]);
    const before = await digests(nodes[1]![1]!);
    ingestBoth(files[2]!);
    // Shard 2's rows of the file went to the replica that is up: the restarted one must fetch them (below).
    expect(await digests(nodes[1]![1]!)).not.toEqual(before);
    expect(await differences(local, front, paths(SEED + 2), H())).toEqual([]);
  }, 120_000);

  it('the killed replica, started again, catches up; then the other one killed: the same answers', async () => {
    await nodes[1]![0]!.start();
    const ms = await rejoined(nodes[1]![0]!);
    const [restarted, other] = await Promise.all(nodes[1]!.map(digests));
    console.log(`the restarted replica rejoined in ${ms.toFixed(0)} ms`);
    expect(restarted).toEqual(other);
    const ledgerRows = await Promise.all(nodes[1]!.map(async (n) => {
      const ch = new ClickHouse(n.url);
      await ch.exec(`SYSTEM SYNC REPLICA ${DATABASE}.ingest_ledger`);
      const rows = await ch.exec(`SELECT sha256, run, state FROM ${DATABASE}.ingest_ledger ORDER BY sha256, run, state FORMAT TabSeparated`);
      ch.close();
      return rows;
    }));
    expect(ledgerRows[0]).toBe(ledgerRows[1]);
    expect(ledgerRows[0], 'no file of the ledger on shard 2').not.toBe('');
    await nodes[1]![1]!.stop();
    // Only the restarted replica holds shard 2 now, the rows ingested while it was down among them.
    expect(await differences(local, front, paths(SEED + 3), H())).toEqual([]);
    // And the input ledger: every file, the one sent while it was down too, is known as ingested.
    const again = cli(['ingest', '--clickhouse-url', nodes[0]![0]!.url, ...files]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr.split('\n').filter((l) => / already ingested \(sha256 [0-9a-f]{12}…, ClickHouse database rrscan, /.test(l)))
      .toHaveLength(files.length);
  }, 120_000);

  it('both replicas of a shard down: searches end failed, never a partial answer', async () => {
    await nodes[1]![0]!.stop();
    for (const p of ['regex/rrnames/paypal', 'lookup/rrset/name/*.example.com', 'lookup/rdata/ip/192.0.2.0,24',
      'summarize/rrset/name/twice.replicas.test']) {
      const r = await get(front, `/pdns/v2/${p}`, H());
      expect(r.status).toBe(200);
      expect(r.body).toBe(body(begin, { cond: 'failed', msg: 'Internal error' }));
    }
  }, 60_000);
});
