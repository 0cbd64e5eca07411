import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nameToWire } from '../../../src/dns/name.js';
import type { Observation } from '../../../src/model/observation.js';
import { dnstapObservations, dnstapResponses } from '../../../src/ingest/dnstap.js';
import { sensorStats } from '../../../src/ingest/sensor.js';
import {
  AA, QR, RD, a, be32, cat, collect, collectingContext, control, dnsMessage, dnstapFrame, tempFile,
} from './wire-fixtures.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const REAL = path.resolve(here, '../../../../shared/data/real/dnstap');

function fstrm(frames: Uint8Array[], contentType = 'protobuf:dnstap.Dnstap'): Uint8Array {
  return cat([control(2, contentType), ...frames, control(3)]);
}

const T = 1717613389;
const response = dnsMessage({
  id: 9, flags: QR | AA, qname: 'www.example.com.',
  answer: [{ name: 'www.example.com.', type: 1, rdata: a('192.0.2.1') }],
  additional: [{ name: 'ns.other.test.', type: 1, rdata: a('192.0.2.99') }],
});
const query = dnsMessage({ id: 9, flags: RD, qname: 'www.example.com.' });
const summary = (obs: Observation[]): string[] => obs.map((o) => `${o.rrname} ${o.rrtype} ${o.bailiwick} ${o.timeFirst} ${o.rdata.map((r) => r.text).join(',')}`);

async function run(name: string, bytes: Uint8Array) {
  const file = tempFile(name, bytes);
  const ctx = collectingContext(file);
  const obs = await collect(dnstapObservations(file, ctx));
  return { obs, ctx, stats: sensorStats(ctx) };
}

describe('dnstap (generated Frame Streams)', () => {
  it('uses *_RESPONSE messages, timed by response_time_sec, and skips queries', async () => {
    const { obs, ctx, stats } = await run('basic.fstrm', fstrm([
      dnstapFrame({ type: 5, queryTimeSec: T - 1, query }), // CLIENT_QUERY
      dnstapFrame({ type: 6, queryTimeSec: T - 1, responseTimeSec: T, query, response }), // CLIENT_RESPONSE
    ]));
    expect(ctx.rejects).toEqual([]);
    // No query_zone: inferred (rule 4, parent of the question); the unrelated glue is out of bailiwick.
    expect(summary(obs)).toEqual([`www.example.com. 1 example.com. ${T} 192.0.2.1`]);
    expect(stats).toMatchObject({ packets: 2, queries: 1, responses: 1, outOfBailiwick: 1 });
  });

  it('query_zone is the bailiwick', async () => {
    const { obs } = await run('zone.fstrm', fstrm([dnstapFrame({ type: 4, responseTimeSec: T, response, zone: '.' })]));
    expect(summary(obs)).toEqual([`www.example.com. 1 . ${T} 192.0.2.1`, `ns.other.test. 1 . ${T} 192.0.2.99`]);
  });

  it('the bailiwick rule by message type (module comment): query_zone when recorded, else inferred', async () => {
    // A recursive answer: a CNAME into another zone, its target's A, and unrelated glue.
    const recursive = dnsMessage({
      flags: QR | RD, qname: 'www.example.com.',
      answer: [
        { name: 'www.example.com.', type: 5, rdata: nameToWire('cdn.other.net.') },
        { name: 'cdn.other.net.', type: 1, rdata: a('198.51.100.1') },
      ],
    });
    // An authority's NXDOMAIN: its SOA names its zone.
    const nxdomain = dnsMessage({
      flags: QR | AA | 3, qname: 'nope.sub.example.com.',
      authority: [{ name: 'example.com.', type: 6, rdata: cat([nameToWire('ns.example.com.'), nameToWire('h.example.com.'),
        be32(1), be32(2), be32(3), be32(4), be32(5)]) }],
    });
    const cases: [string, Uint8Array, string[], number][] = [
      // RESOLVER_RESPONSE with query_zone: the zone is taken as given; the other zone's records are refused.
      ['resolver', dnstapFrame({ type: 4, responseTimeSec: T, response, zone: 'example.com.' }),
        [`www.example.com. 1 example.com. ${T} 192.0.2.1`], 1],
      // AUTH_RESPONSE without query_zone: the SOA the authority put in (rule 1) names the zone; the SOA is in it.
      ['auth', dnstapFrame({ type: 2, responseTimeSec: T, response: nxdomain }), [`example.com. 6 example.com. ${T} ns.example.com. h.example.com. 1 2 3 4 5`], 0],
      // CLIENT_RESPONSE without query_zone (a cache answer): inferred, the question's parent; the CNAME target's A is refused.
      ['client', dnstapFrame({ type: 6, responseTimeSec: T, response: recursive }),
        [`www.example.com. 5 example.com. ${T} cdn.other.net.`], 1],
      // CLIENT_RESPONSE with query_zone: the sender's zone wins over inference.
      ['client with zone', dnstapFrame({ type: 6, responseTimeSec: T, response: recursive, zone: '.' }),
        [`www.example.com. 5 . ${T} cdn.other.net.`, `cdn.other.net. 1 . ${T} 198.51.100.1`], 0],
    ];
    for (const [name, frame, expected, refused] of cases) {
      const { obs, ctx, stats } = await run(`rule-${name.replace(/ /g, '-')}.fstrm`, fstrm([frame]));
      expect(ctx.rejects, name).toEqual([]);
      expect(summary(obs), name).toEqual(expected);
      expect(stats.outOfBailiwick, name).toBe(refused);
    }
  });

  it('falls back to query_time_sec when the response time is missing', async () => {
    const { obs } = await run('qtime.fstrm', fstrm([dnstapFrame({ type: 2, queryTimeSec: T - 5, response })]));
    expect(obs.map((o) => o.timeFirst)).toEqual([T - 5]);
  });

  it('every response type counts: AUTH, RESOLVER, CLIENT, FORWARDER, STUB, TOOL, UPDATE', async () => {
    const frames = [2, 4, 6, 8, 10, 12, 14].map((type) => dnstapFrame({ type, responseTimeSec: T, response }));
    const { obs } = await run('types.fstrm', fstrm(frames));
    expect(obs.length).toBe(7);
  });

  it('a non-MESSAGE Dnstap and a response without a message are skipped', async () => {
    const { obs, ctx, stats } = await run('skip.fstrm', fstrm([
      dnstapFrame({ type: 6, responseTimeSec: T, response }, 2),
      dnstapFrame({ type: 6, responseTimeSec: T }),
    ]));
    expect(obs).toEqual([]);
    expect(ctx.rejects).toEqual([]);
    expect(stats.otherTraffic).toBe(2);
  });

  it('rejects a wrong content type', async () => {
    const { obs, ctx } = await run('ctype.fstrm', fstrm([dnstapFrame({ type: 6, responseTimeSec: T, response })], 'protobuf:other.Thing'));
    expect(obs).toEqual([]);
    expect(ctx.rejects.length).toBe(1);
    expect((ctx.rejects[0] as { where?: string }).where).toBe('frame 1 (byte offset 0)');
    expect(ctx.rejects[0]!.message).toContain('content type "protobuf:other.Thing" is not "protobuf:dnstap.Dnstap"');
  });

  it('a malformed protobuf or DNS message is rejected with its frame; reading goes on', async () => {
    const good = dnstapFrame({ type: 6, responseTimeSec: T, response });
    const badProto = cat([be32(3), Uint8Array.of(0x72, 0x50, 0x01)]); // field 14, length 80, 1 byte present
    const badDns = dnstapFrame({ type: 6, responseTimeSec: T, response: response.subarray(0, 20) });
    const bytes = fstrm([badProto, badDns, good]);
    const { obs, ctx, stats } = await run('bad.fstrm', bytes);
    expect(summary(obs)).toEqual([`www.example.com. 1 example.com. ${T} 192.0.2.1`]);
    const startLen = control(2, 'protobuf:dnstap.Dnstap').length;
    expect(ctx.rejects.map((e) => (e as { where?: string }).where)).toEqual([
      `frame 2 (byte offset ${startLen})`, `frame 3 (byte offset ${startLen + badProto.length})`,
    ]);
    expect(ctx.rejects[0]!.message).toContain('malformed dnstap protobuf');
    expect(ctx.rejects[1]!.message).toContain('DNS response does not parse');
    expect(stats.rejected).toBe(2);
  });

  it('bug: a data frame of 1 MiB failed an assertion instead of being rejected (dnstap fuzz)', async () => {
    // Counterexample of the dnstap fuzz target (a flipped bit made a frame length 0x00100000): the frame and its
    // 4-byte length did not fit one read chunk, and ChunkedFile.fill asserted.
    const startLen = control(2, 'protobuf:dnstap.Dnstap').length;
    for (const len of [1 << 20, (1 << 20) - 3]) {
      const { obs, ctx } = await run('big.fstrm', cat([control(2, 'protobuf:dnstap.Dnstap'), be32(len), new Uint8Array(16)]));
      expect(obs).toEqual([]);
      expect(ctx.rejects.map((e) => [(e as { where?: string }).where, (e as { reason?: string }).reason])).toEqual([
        [`frame 2 (byte offset ${startLen})`, `frame length ${len} exceeds ${(1 << 20) - 4} bytes`],
      ]);
    }
  });

  it('a file cut inside a frame is rejected once and stops', async () => {
    const bytes = fstrm([dnstapFrame({ type: 6, responseTimeSec: T, response })]);
    const { obs, ctx } = await run('cut.fstrm', bytes.subarray(0, bytes.length - 20));
    expect(obs).toEqual([]);
    expect(ctx.rejects.length).toBe(1);
    expect(ctx.rejects[0]!.message).toContain('file ends inside a data frame');
  });
});

const haveReal = existsSync(REAL);
const describeReal = haveReal ? describe : describe.skip;
if (!haveReal) console.warn(`dnstap.test.ts: real dnstap files skipped: ${REAL} is absent (CI always has it)`);

describeReal('real dnstap files (shared/data/real/dnstap)', () => {
  it('bind9-dnstap.saved: 96 frames, 48 responses, www.isc.org and its zone', async () => {
    const file = path.join(REAL, 'bind9-dnstap.saved.fstrm');
    const ctx = collectingContext(file);
    const responses = await collect(dnstapResponses(file, ctx));
    expect(ctx.rejects).toEqual([]);
    expect(responses.length).toBe(48);
    // dnstap-read's expected output (written in US Pacific time, UTC-8 in February) lists the same response times.
    const expectedTimes = readFileSync(path.join(REAL, 'bind9-dnstap.saved.expected.txt'), 'latin1').trim().split('\n')
      .filter((l) => / [A-Z]R /.test(l))
      .map((l) => {
        const [d, t] = l.split(' ');
        return Math.floor(Date.parse(`${d!.replace(/-/g, ' ')} ${t!.slice(0, 8)} GMT-0800`) / 1000);
      });
    expect(responses.map((r) => r.timeSec).sort()).toEqual(expectedTimes.sort());
    // BIND's test harness recorded query_zone "example.com." on AUTH, RESOLVER and FORWARDER responses.
    expect(countBy(responses, (r) => r.bailiwick ?? '(none)')).toEqual({ 'example.com.': 24, '(none)': 24 });

    const obsCtx = collectingContext(file);
    const obs = await collect(dnstapObservations(file, obsCtx));
    const stats = sensorStats(obsCtx);
    expect(stats).toMatchObject({ packets: 96, queries: 48, responses: 48, records: 576, metaOrClass: 48, rejected: 0 });
    // query_zone IS the bailiwick: isc.org data in answer to a query about example.com. is out of it,
    // so those 24 responses (11 RRs each) yield nothing. The other 24 infer isc.org. (rule 3: NS in
    // authority) and keep all 11 RRs: ns.isc.afilias-nst.info. appears only as NS rdata, with no glue.
    expect(stats.outOfBailiwick).toBe(24 * 11);
    expect(stats.observations).toBe(24 * 8);
    const first = obs.slice(0, 8).map((o) => `${line(o)}`);
    expect(first).toEqual([
      'www.isc.org. 1 isc.org. 149.20.64.69',
      'isc.org. 2 isc.org. ams.sns-pb.isc.org.,sfba.sns-pb.isc.org.,ns.isc.afilias-nst.info.,ord.sns-pb.isc.org.',
      'ams.sns-pb.isc.org. 1 isc.org. 199.6.1.30',
      'ams.sns-pb.isc.org. 28 isc.org. 2001:500:60::30',
      'ord.sns-pb.isc.org. 1 isc.org. 199.6.0.30',
      'ord.sns-pb.isc.org. 28 isc.org. 2001:500:71::30',
      'sfba.sns-pb.isc.org. 1 isc.org. 149.20.64.3',
      'sfba.sns-pb.isc.org. 28 isc.org. 2001:4f8:0:2::19',
    ]);
    expect(new Set(obs.map((o) => o.timeFirst))).toEqual(new Set([1486169236, 1486172836]));
  });

  it('go-dnscollector-dnstap: one CLIENT_RESPONSE for www.google.com A', async () => {
    const file = path.join(REAL, 'go-dnscollector-dnstap.fstrm');
    const ctx = collectingContext(file);
    const obs = await collect(dnstapObservations(file, ctx));
    expect(ctx.rejects).toEqual([]);
    expect(sensorStats(ctx)).toMatchObject({ packets: 2, queries: 1, responses: 1, records: 2, metaOrClass: 1 });
    expect(obs.map((o) => `${o.timeFirst} ${line(o)}`)).toEqual(['1717613389 www.google.com. 1 google.com. 216.58.213.68']);
  });
});

const line = (o: Observation): string => `${o.rrname} ${o.rrtype} ${o.bailiwick} ${o.rdata.map((r) => r.text).join(',')}`;

function countBy<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}
