// Ingest as operators run it: the CLI on real files, failures that publish
// nothing, compaction, and a running server picking up new shards (issue 2).
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HAVE_REAL, REAL, REAL_SKIP_REASON, addKey, cli, get, ingestNdjson, objects, startServer, tempPaths, until,
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

describe('zone $INCLUDE reads only below the zone file\'s directory and --include-root (issue 21)', () => {
  // zones/ holds the zone files; secret/passwd beside it stands for /etc/passwd: were it read, the reject of its
  // first line would quote SECRET (`unknown type "..."`). shared/ is a directory --include-root lets in.
  const base = realpathSync(fresh());
  const zones = path.join(base, 'zones');
  const secret = path.join(base, 'secret', 'passwd');
  const SECRET = 'SECRET-TOKEN-9f86d081';
  const write = (f: string, text: string): string => {
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, text);
    return f;
  };
  write(secret, `root ${SECRET} x 0 0\n`);
  write(path.join(zones, 'sub', 'hosts.zone'), 'www A 192.0.2.1\nmail A 192.0.2.2\n');
  write(path.join(base, 'shared', 'common.zone'), 'common A 192.0.2.3\n');
  symlinkSync(secret, path.join(zones, 'passwd-link'));
  const zone = (name: string, include: string): string =>
    write(path.join(zones, name), `$ORIGIN example.org.\n$INCLUDE ${include}\nkept A 192.0.2.9\n`);
  const notUnder = (roots: string) => `not under ${roots}: $INCLUDE reads only below the zone file's directory and each --include-root DIR`;
  const NOTHING = 'rrscan ingest: nothing was published (use --max-errors N to skip bad records)\n';

  it('an include below the zone file\'s directory is read and published', () => {
    const r = cli(['ingest', '--data', path.join(base, 'data-inside'), zone('inside.zone', 'sub/hosts.zone')]);
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r.stdout)!.slice(1)).toEqual(['1', '3', '3', '1', '0']);
  });

  it('`..`, an absolute path and a symlink outside fail the run, naming file, line and path, never the file\'s contents', () => {
    const cases: [string, string][] = [
      [zone('dotdot.zone', '../secret/passwd'), `$INCLUDE ${secret} is ${notUnder(zones)}`],
      [zone('absolute.zone', secret), `$INCLUDE ${secret} is ${notUnder(zones)}`],
      [zone('symlink.zone', 'passwd-link'), `$INCLUDE ${path.join(zones, 'passwd-link')} resolves to ${secret}, which is ${notUnder(zones)}`],
    ];
    for (const [file, reason] of cases) {
      const data = path.join(base, `data-${path.basename(file)}`);
      const r = cli(['ingest', '--data', data, file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`rrscan ingest: ${file}: line 2: ${reason}\n${NOTHING}`);
      expect(r.stdout).toBe('');
      expect(existsSync(path.join(data, 'manifest.json'))).toBe(false);
    }
    // Under --max-errors a refused include is skipped like any bad record, and the rest of the file goes in.
    const r = cli(['ingest', '--data', path.join(base, 'data-skipped'), '--max-errors', '3', ...cases.map(([f]) => f)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(cases.map(([f, reason]) => `rrscan ingest: skipped: ${f}: line 2: ${reason}\n`).join(''));
    expect(summary(r.stdout)!.slice(1)).toEqual(['3', '3', '1', '1', '3']);
  });

  it('--include-root lets a directory in, and only that one', () => {
    const file = write(path.join(zones, 'widen.zone'), '$ORIGIN example.org.\n$INCLUDE ../shared/common.zone\n$INCLUDE ../secret/passwd\n');
    const without = cli(['ingest', '--data', path.join(base, 'data-without'), '--max-errors', '2', file]);
    expect(without.stderr).toBe(`rrscan ingest: skipped: ${file}: line 2: $INCLUDE ${path.join(base, 'shared', 'common.zone')} is ` +
      `${notUnder(zones)}\nrrscan ingest: skipped: ${file}: line 3: $INCLUDE ${secret} is ${notUnder(zones)}\n`);
    const r = cli(['ingest', '--data', path.join(base, 'data-with'), '--include-root', path.join(base, 'shared'), file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`rrscan ingest: ${file}: line 3: $INCLUDE ${secret} is ${notUnder(`${zones} or ${path.join(base, 'shared')}`)}\n` +
      NOTHING);
    const ok = cli(['ingest', '--data', path.join(base, 'data-with'), '--include-root', path.join(base, 'shared'),
      '--max-errors', '1', file]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(summary(ok.stdout)!.slice(1)).toEqual(['1', '1', '1', '1', '1']);
    for (const out of [without.stdout, without.stderr, r.stdout, r.stderr, ok.stdout, ok.stderr]) expect(out).not.toContain(SECRET);
    // A fixture that is read is quoted by its rejects: what the confinement keeps off stderr.
    const opened = cli(['ingest', '--data', path.join(base, 'data-opened'), '--include-root', path.join(base, 'shared'),
      '--include-root', path.join(base, 'secret'), file]);
    expect(opened.stderr).toContain(`${secret}: line 1: unknown type "${SECRET}"`);
    expect(cli(['ingest', '--data', path.join(base, 'data-x'), '--include-root', path.join(base, 'none'), file]).stderr)
      .toContain(`${path.join(base, 'none')}: not a directory`);
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
      let got: unknown[] = [];
      await until('the server serves both shards', async () => {
        got = objects((await get(server, q, { 'X-API-Key': key })).body);
        return (got[0] as { count: number }).count === 6;
      }, 10_000, 100);
      expect(got).toEqual([
        { count: 6, time_first: 50, time_last: 200, rrname: 'x.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.9'] }]);
      const flexBefore = (await get(server, '/pdns/v2/glob/rrnames/x.example.', { 'X-API-Key': key })).body;
      expect(objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body)).toHaveLength(2);

      const c = cli(['compact', '--data', d]);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toMatch(/compact: 2 shard\(s\), 2 RRsets in -> 1 shard\(s\), 1 RRsets/);
      const m = JSON.parse(readFileSync(path.join(d, 'manifest.json'), 'utf8')) as { shards: unknown[] };
      expect(m.shards).toHaveLength(1);
      await until('the server serves the compacted shard',
        async () => objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body).length === 1, 10_000, 100);
      expect(objects((await get(server, `${q}?aggr=false`, { 'X-API-Key': key })).body)).toEqual(got);
      expect((await get(server, '/pdns/v2/glob/rrnames/x.example.', { 'X-API-Key': key })).body).toBe(flexBefore);
    } finally {
      await server.close();
    }
  });
});
