// Time fences judge what the client receives (compat.md "Values"): standard
// search the result object (with aggr the RRset summed over every shard,
// without aggr each row alone), flexible search each (value, rrtype) tuple
// over every RRset and shard behind it. The data is two ingests, so two
// shards, that saw some of the same names at different times.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, begin, body, get, none, ok, removeDir, tempDir, type Server } from '../helpers/rrscan.js';
import { describeEachBackend } from '../helpers/backends.js';

const OLD = 1_430_000_000; // 2015
const NOW = Math.floor(Date.now() / 1000);
const RECENT = NOW - 3_600;
const DAY_AGO = NOW - 86_400;

const rr = (rrname: string, rrtype: string, rdata: string, first: number, last: number) =>
  ({ count: 1, time_first: first, time_last: last, rrname, rrtype, bailiwick: 'example.', rdata: [rdata] });

describeEachBackend('time fences', (backend) => {
  let dir: string;
  let server: Server;
  let H: Record<string, string>;

  beforeAll(async () => {
    dir = tempDir('rrscan-fence-');
    // Shard 1: what was seen in 2015, and one name first seen an hour ago.
    backend.ingestNdjson(dir, [
      rr('again.example.', 'A', '192.0.2.1', OLD, OLD + 100),
      rr('moved.example.', 'A', '192.0.2.2', OLD, OLD + 100),
      rr('stale.example.', 'A', '192.0.2.3', OLD, OLD + 100),
      rr('fresh.example.', 'A', '192.0.2.4', RECENT, RECENT),
      rr('alias.example.', 'CNAME', 'target.example.', OLD, OLD + 100),
    ], 'old.ndjson');
    // Shard 2, an hour ago: the same RRset again, the same name with new rdata, the same CNAME target.
    backend.ingestNdjson(dir, [
      rr('again.example.', 'A', '192.0.2.1', RECENT, RECENT),
      rr('moved.example.', 'A', '192.0.2.99', RECENT, RECENT),
      rr('other.example.', 'CNAME', 'target.example.', RECENT, RECENT),
    ], 'recent.ndjson');
    H = { 'X-API-Key': addKey(dir) };
    server = await backend.startServer(dir);
  });

  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  const ndjson = async (p: string) => (await get(server, p, H)).body;
  const name = (rrname: string, rrtype = 'A') => ({ obj: { rrname, rrtype } });

  describe('flexible search judges each (value, rrtype) over every shard', () => {
    it('time_last_before: names of that type not seen since T (moved and again were seen an hour ago)', async () => {
      expect(await ndjson(`/pdns/v2/regex/rrnames/example?time_last_before=${DAY_AGO}`))
        .toBe(body(begin, name('alias.example.', 'CNAME'), name('stale.example.'), ok));
    });

    it('time_first_after: names first seen after T (again and moved were first seen in 2015)', async () => {
      expect(await ndjson(`/pdns/v2/regex/rrnames/example?time_first_after=${DAY_AGO}`))
        .toBe(body(begin, name('fresh.example.'), name('other.example.', 'CNAME'), ok));
      expect(await ndjson('/pdns/v2/regex/rrnames/example?time_first_after=-86400'))
        .toBe(body(begin, name('fresh.example.'), name('other.example.', 'CNAME'), ok));
    });

    it('rdata values likewise: target.example. as a CNAME target was last seen an hour ago', async () => {
      expect(await ndjson(`/pdns/v2/regex/rdata/target?time_last_before=${DAY_AGO}`)).toBe(body(begin, none));
      const both = await ndjson(`/pdns/v2/regex/rdata/target?time_first_before=${DAY_AGO}&time_last_after=${DAY_AGO}`);
      expect(both).toBe(body(begin,
        { obj: { rdata: 'target.example.', rrtype: 'CNAME', raw_rdata: '06746172676574076578616D706C6500' } }, ok));
    });

    it('without a fence every name answers, once, with the union of its rrtypes', async () => {
      expect(await ndjson('/pdns/v2/regex/rrnames/example')).toBe(body(begin,
        name('again.example.'), name('alias.example.', 'CNAME'), name('fresh.example.'), name('moved.example.'),
        name('other.example.', 'CNAME'), name('stale.example.'), ok));
    });
  });

  describe('standard search judges the object returned', () => {
    const again = (first: number, last: number, count: number) =>
      ({ obj: {
        count, time_first: first, time_last: last, rrname: 'again.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.1'],
      } });

    it('aggr=true: the RRset summed over both shards was first seen in 2015, so it is not "first seen after yesterday"', async () => {
      expect(await ndjson('/pdns/v2/lookup/rrset/name/again.example/A?time_first_after=-86400')).toBe(body(begin, none));
      // And a fence it passes never shortens its times.
      expect(await ndjson('/pdns/v2/lookup/rrset/name/again.example/A?time_last_after=-86400'))
        .toBe(body(begin, again(OLD, RECENT, 2), ok));
    });

    it('aggr=false: each observation batch is judged on its own', async () => {
      // ClickHouse holds every RRset aggregated over all data (its engine merges as a compaction does), so its
      // aggr=false rows are those of local shards compacted into one: the 2015 sighting is in the row.
      const want = backend.name === 'ClickHouse' ? body(begin, none) : body(begin, again(RECENT, RECENT, 1), ok);
      expect(await ndjson('/pdns/v2/lookup/rrset/name/again.example/A?time_first_after=-86400&aggr=false')).toBe(want);
    });

    it('rdata lookups and summaries judge the same objects', async () => {
      expect(await ndjson('/pdns/v2/lookup/rdata/ip/192.0.2.1?time_first_after=-86400')).toBe(body(begin, none));
      expect(await ndjson('/pdns/v2/summarize/rrset/name/*.example/A?time_first_after=-86400'))
        .toBe(body(begin, { obj: { count: 2, num_results: 2, time_first: RECENT, time_last: RECENT } }, ok));
    });
  });
});
