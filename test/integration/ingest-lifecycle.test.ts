// Ingest as operators run it: the CLI on real files, failures that publish
// nothing, compaction, and a running server picking up new shards (issue 2).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HAVE_REAL, REAL, REAL_SKIP_REASON, addKey, cli, get, ingestNdjson, objects, startServer, tempPaths,
} from '../helpers/rrscan.js';

const temp = tempPaths();
const fresh = temp.fresh;
afterAll(temp.removeAll);

const summary = (out: string) => /ingest: (\d+) file\(s\), (\d+) records read, (\d+) RRsets written in (\d+) shard\(s\), (\d+) rejected/.exec(out);

if (!HAVE_REAL) console.warn(`ingest-lifecycle.test.ts: ${REAL_SKIP_REASON}`);

describe.skipIf(!HAVE_REAL)('rrscan ingest on real data', () => {
  it('2024 root zone: 25,047 records in 17,339 RRsets (SOURCES.md)', () => {
    const d = fresh();
    const r = cli(['ingest', '--data', d, path.join(REAL, 'zones/root.zone.2024101100')]);
    expect(r.code, r.stderr).toBe(0);
    const m = summary(r.stdout)!;
    expect([m[2], m[3], m[5]]).toEqual(['25047', '17339', '0']);
  });

  it('pcap, dnstap and NDJSON ingest through auto-detection in one run', () => {
    const d = fresh();
    const r = cli(['ingest', '--data', d,
      path.join(REAL, 'pcap/dnscap-dns-20161020.pcap'),
      path.join(REAL, 'dnstap/bind9-dnstap.saved.fstrm'),
      path.join(REAL, 'json/circl-cof-example.ndjson')]);
    expect(r.code, r.stderr).toBe(0);
    const m = summary(r.stdout)!;
    expect(m[1]).toBe('3');
    expect(Number(m[3])).toBeGreaterThan(10);
  });
});

describe('failures publish nothing', () => {
  it('a bad NDJSON line names file and line; exit 2; the data stays as it was', () => {
    const d = fresh();
    ingestNdjson(d, [{ rrname: 'a.example.', rrtype: 'A', rdata: ['192.0.2.1'], time_first: 1, time_last: 2 }]);
    const before = readFileSync(path.join(d, 'manifest.json'), 'utf8');
    const bad = path.join(d, '..', `${path.basename(d)}-bad.ndjson`);
    writeFileSync(bad, '{"rrname":"b.example.","rrtype":"A","rdata":"192.0.2.2","time_first":1,"time_last":2}\nnot json\n');
    const r = cli(['ingest', '--data', d, bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}: line 2:`);
    expect(r.stderr).toContain('nothing was published');
    expect(readFileSync(path.join(d, 'manifest.json'), 'utf8')).toBe(before);
    const skipped = cli(['ingest', '--data', d, '--max-errors', '1', bad]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(summary(skipped.stdout)![5]).toBe('1');
  });

  it('a bad zone line is named by line number', () => {
    const d = fresh();
    const zone = path.join(d, '..', `${path.basename(d)}.zone`);
    writeFileSync(zone, '$ORIGIN example.\n$TTL 60\n@ IN SOA ns hostmaster 1 2 3 4 5\nwww IN A 999.1.1.1\n');
    const r = cli(['ingest', '--data', d, zone]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${zone}: line 4:`);
  });
});

describe('compaction and hot reload', () => {
  it('a running server sees new shards without a restart; compact aggregates duplicates', async () => {
    const d = fresh();
    const rec = (count: number, first: number, last: number) =>
      ({ count, time_first: first, time_last: last, rrname: 'x.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.9'] });
    ingestNdjson(d, [rec(1, 100, 200)], 'one.ndjson');
    const key = addKey(d);
    const server = await startServer(d);
    try {
      const q = '/pdns/v2/lookup/rrset/name/x.example.';
      expect(objects((await get(server, q, { 'X-API-Key': key })).body)).toEqual([
        { count: 1, time_first: 100, time_last: 200, rrname: 'x.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.9'] }]);
      ingestNdjson(d, [rec(5, 50, 150)], 'two.ndjson');
      // Two shards now; the server reloads on the manifest swap and aggregates across them.
      const deadline = Date.now() + 10_000;
      let got: unknown[] = [];
      while (Date.now() < deadline) {
        got = objects((await get(server, q, { 'X-API-Key': key })).body);
        if ((got[0] as { count: number }).count === 6) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(got).toEqual([
        { count: 6, time_first: 50, time_last: 200, rrname: 'x.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.9'] }]);
      const flexBefore = (await get(server, '/pdns/v2/glob/rrnames/x.example.', { 'X-API-Key': key })).body;
      expect(objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body)).toHaveLength(2);

      const c = cli(['compact', '--data', d]);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toMatch(/compact: 2 shard\(s\), 2 RRsets in -> 1 shard\(s\), 1 RRsets/);
      const m = JSON.parse(readFileSync(path.join(d, 'manifest.json'), 'utf8')) as { shards: unknown[] };
      expect(m.shards).toHaveLength(1);
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        if (objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body).length === 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body)).toEqual(got);
      expect((await get(server, '/pdns/v2/glob/rrnames/x.example.', { 'X-API-Key': key })).body).toBe(flexBefore);
    } finally {
      await server.close();
    }
  });
});
