// Standing watches over live dnstap (README "Standing watches"), end to
// end: a real `rrscan ingest --listen` publishing a shard every second, a
// real `rrscan serve`, and a Frame Streams sender (helpers/live-ingest.ts)
// whose frames carry the times the test chooses, so that every object's
// time_first is known and bodies are compared exactly. BIND with dig drives
// the same rules in watch-bind.test.ts.
//
// Ordering trick: frames from one sender are read in order and published in
// order, so when the last frame sent (a new matching name) reaches the
// watch, every frame sent before it has been published and matched: a body
// that holds only what it should then proves that the others were not sent.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameToWire } from '../../src/dns/name.js';
import { STREAM_MESSAGES } from '../../src/errors/catalogue.js';
import { FrameSender, startReceiver, waitForResults, type Receiver } from '../helpers/live-ingest.js';
import { OpenApiConformance } from '../helpers/openapi-conformance.js';
import { addKey, begin, body, get, limited, logLines, REPO, startServer, tempPaths, type Server } from '../helpers/rrscan.js';
import { WatchClient } from '../helpers/watch-client.js';
import { AA, QR, a, dnsMessage, dnstapFrame } from '../unit/ingest/wire-fixtures.js';

const { fresh, removeAll } = tempPaths();
afterAll(removeAll);

const now = (): number => Math.floor(Date.now() / 1000);

/** An AUTH_RESPONSE frame: `name` `type` `rdata` from zone live.test., observed at `t`. */
function frame(name: string, t: number, rr: { type: number; rdata: Uint8Array } = { type: 1, rdata: a('192.0.2.1') }): Uint8Array {
  const response = dnsMessage({ flags: QR | AA, qname: name, qtype: rr.type, answer: [{ name, type: rr.type, rdata: rr.rdata }] });
  return dnstapFrame({ type: 2, responseTimeSec: t, response, zone: 'live.test.' });
}

/** Every answer below that a test reads whole is checked against the committed OpenAPI document too. */
const openapi = new OpenApiConformance(JSON.parse(readFileSync(path.join(REPO, 'api', 'openapi.json'), 'utf8')) as object);

const failed = (msg: string) => ({ cond: 'failed', msg });
const shutdown = failed(STREAM_MESSAGES.SHUTDOWN);
const rrname = (name: string, t: number, rrtype = 'A') => ({ obj: { rrname: name, rrtype, time_first: t } });
const watchPath = (pattern: string, query = '') => `/pdns/v2/watch/regex/rrnames/${encodeURIComponent(pattern)}${query}`;

interface Live {
  data: string;
  receiver: Receiver;
  sender: FrameSender;
  server: Server;
  key: string;
  /** Sends frames and waits until the socket took them. */
  send(...frames: Uint8Array[]): Promise<void>;
  /** Sends `name` (observed now) and waits until a lookup finds it: published and served. */
  seed(name: string, t?: number): Promise<number>;
  close(): Promise<void>;
}

async function live(serveFlags: string[] = [], env: Record<string, string> = {}): Promise<Live> {
  const d = fresh();
  const data = path.join(d, 'data');
  const receiver = await startReceiver(data, ['tcp:127.0.0.1:0']);
  const key = addKey(data);
  const server = await startServer(data, serveFlags, env);
  const sender = await FrameSender.connect(receiver.addresses[0]!);
  await sender.handshake();
  const l: Live = {
    data, receiver, sender, server, key,
    send: async (...frames) => {
      for (const f of frames) await sender.write(f);
    },
    seed: async (name, t = now()) => {
      await l.send(frame(name, t));
      await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/${name}`, 1);
      return t;
    },
    close: async () => {
      await server.close();
      await sender.finish();
      expect(await receiver.stop()).toBe(0);
    },
  };
  return l;
}

describe('standing watches over live dnstap', () => {
  let l: Live;
  beforeAll(async () => {
    l = await live();
  }, 60_000);
  afterAll(() => l?.close());

  it('delivers a matching name seen for the first time, once; not a known one, not one that does not match; ' +
    'a client that resumes from the last time_first gets what it missed, then the live tail', async () => {
    // Known since a minute ago (the frame says so).
    const t0 = await l.seed('old.watch-me.live.test.', now() - 60);
    const w = new WatchClient(l.server.port, watchPath('watch-me'), l.key);
    expect(await w.response).toBe(200);
    await w.begun();
    const t1 = now();
    // Seen again, no match, new: only the last reaches the watch, and it comes last.
    await l.send(frame('old.watch-me.live.test.', t1), frame('other.live.test.', t1), frame('new1.watch-me.live.test.', t1));
    await w.objectsAtLeast(1);
    // The same name again in a later shard: not new any more.
    await l.send(frame('new1.watch-me.live.test.', now()), frame('sentinel1.watch-me.live.test.', now()));
    await w.objectsAtLeast(2);
    const first = w.objects();
    expect(first[0]).toEqual(rrname('new1.watch-me.live.test.', t1).obj);
    expect(first).toHaveLength(2);
    expect(first[1]!['rrname']).toBe('sentinel1.watch-me.live.test.');
    const last = first[1]!['time_first'] as number;
    expect(t0).toBeLessThan(t1);

    // The client goes away; meanwhile a new name is published.
    w.hangUp();
    await w.ended;
    const t2 = now();
    await l.seed('new2.watch-me.live.test.', t2);
    // It resumes from the last time_first it received: the boundary second again, then what it missed, then live.
    const r = new WatchClient(l.server.port, watchPath('watch-me', `?time_first_after=${last}`), l.key);
    // new1 (first seen at t1 <= last) comes again only when it is in that second: a duplicate at the boundary.
    const caught = [rrname('sentinel1.watch-me.live.test.', last), rrname('new2.watch-me.live.test.', t2),
      ...(t1 === last ? [rrname('new1.watch-me.live.test.', t1)] : [])]
      .sort((x, y) => x.obj.time_first - y.obj.time_first || (x.obj.rrname < y.obj.rrname ? -1 : 1));
    await r.objectsAtLeast(caught.length);
    const t3 = now();
    await l.send(frame('new3.watch-me.live.test.', t3));
    await r.objectsAtLeast(caught.length + 1);
    expect(r.body()).toBe(body(begin, ...caught, rrname('new3.watch-me.live.test.', t3)));
    r.hangUp();
  }, 60_000);

  it('ends `limited` at `limit`, in time_first order', async () => {
    const w = new WatchClient(l.server.port, watchPath('lim-me', '?limit=2'), l.key);
    // The same watch read whole, for the document's check (headers and all).
    const whole = get(l.server, watchPath('lim-me', '?limit=2'), { 'X-API-Key': l.key });
    await w.begun();
    const t = now();
    await l.send(frame('c.lim-me.live.test.', t + 1), frame('b.lim-me.live.test.', t), frame('a.lim-me.live.test.', t));
    expect(await w.ended).toEqual({ complete: true });
    const want = body(begin, rrname('a.lim-me.live.test.', t), rrname('b.lim-me.live.test.', t), limited);
    expect(w.body()).toBe(want);
    const reply = await whole;
    expect(reply.body.replace(/^\{\}\n/gm, '')).toBe(want);
    expect(openapi.check(watchPath('lim-me', '?limit=2'), reply)).toEqual({ path: '/watch/regex/{what_to_search}/{value}', status: '200' });
  }, 30_000);

  it('watches rdata, and leaves out what `exclude` matches', async () => {
    const target = 'target.watch-rdata.example.';
    const wire = Buffer.from(nameToWire(target)).toString('hex').toUpperCase();
    const rdata = new WatchClient(l.server.port, `/dnsdb/v2/watch/glob/rdata/${encodeURIComponent('*.watch-rdata.example.')}`, l.key);
    const names = new WatchClient(l.server.port, watchPath('excl-me', '?exclude=skip'), l.key);
    await Promise.all([rdata.begun(), names.begun()]);
    const t = now();
    await l.send(frame('skip.excl-me.live.test.', t), frame('c1.live.test.', t, { type: 5, rdata: nameToWire(target) }),
      frame('keep.excl-me.live.test.', t));
    await Promise.all([rdata.objectsAtLeast(1), names.objectsAtLeast(1)]);
    expect(rdata.body()).toBe(body(begin, { obj: { rdata: target, rrtype: 'CNAME', raw_rdata: wire, time_first: t } }));
    expect(names.body()).toBe(body(begin, rrname('keep.excl-me.live.test.', t)));
    rdata.hangUp();
    names.hangUp();
  }, 30_000);

  it('shows a time-fenced key only what its fence allows', async () => {
    const hour = now() - 3600;
    const before = addKey(l.data, ['--unlimited', '--time-fence-before', String(hour)]);
    const after = addKey(l.data, ['--unlimited', '--time-fence-after', String(hour)]);
    const hidden = new WatchClient(l.server.port, watchPath('fenced'), before);
    const shown = new WatchClient(l.server.port, watchPath('fenced'), after);
    await Promise.all([hidden.begun(), shown.begun()]);
    const t = now();
    await l.send(frame('x.fenced.live.test.', t));
    await shown.objectsAtLeast(1);
    // Both were matched in the same pass and written in the same turn: nothing more is on its way to `hidden`.
    await new Promise((r) => setTimeout(r, 300));
    expect(shown.body()).toBe(body(begin, rrname('x.fenced.live.test.', t)));
    expect(hidden.body()).toBe(body(begin));
    hidden.hangUp();
    shown.hangUp();
  }, 30_000);

  it('holds one of the key\'s --max-concurrent streams while open; a client that hangs up frees it', async () => {
    const one = addKey(l.data, ['--unlimited', '--max-concurrent', '1']);
    const first = new WatchClient(l.server.port, watchPath('slot'), one);
    await first.begun();
    const second = await get(l.server, watchPath('slot'), { 'X-API-Key': one });
    expect([second.status, second.body]).toEqual([503, 'Error: Too many concurrent connections\n']);
    openapi.check(watchPath('slot'), second);
    first.hangUp();
    await first.ended;
    // The server frees the slot when it sees the hang-up.
    const deadline = Date.now() + 5_000;
    let third: WatchClient;
    for (;;) {
      third = new WatchClient(l.server.port, watchPath('slot'), one);
      if (await third.response === 200 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(third.status).toBe(200);
    await third.begun();
    third.hangUp();
  }, 30_000);

  it('answers a bad pattern in-stream with RE2\'s words, and refuses what a watch does not take', async () => {
    const bad = await get(l.server, watchPath('pay(pal'), { 'X-API-Key': l.key });
    const flex = await get(l.server, `/pdns/v2/regex/rrnames/${encodeURIComponent('pay(pal')}`, { 'X-API-Key': l.key });
    expect(bad.status).toBe(200);
    expect(bad.body).toBe(flex.body);
    expect(bad.body).toMatch(/^\{"cond":"begin"\}\n\{"cond":"failed","msg":"invalid regular expression at position 3: /);
    const refusals: [string, number, string][] = [
      ['/pdns/v2/watch', 400, 'Error: REQUEST_URI is missing path segment\n'],
      ['/pdns/v2/watch/lookup/rrnames/x', 400, 'Error: SEARCH_METHOD has an unsupported value\n'],
      ['/pdns/v2/watch/regex/names/x', 400, 'Error: WHAT_TO_SEARCH has an unsupported value\n'],
      [watchPath('x', '?offset=1'), 400, 'Error: unable to parse request\n'],
      [watchPath('x', '?time_last_after=1'), 400, 'Error: unable to parse request\n'],
      [watchPath('x', '?time_first_after=yesterday'), 400, 'Error: unable to parse request\n'],
      ['/pdns/v2/watch/regex/rdata/x/NSEC', 400, 'Error: RRTYPE has an unsupported DNSSEC value\n'],
    ];
    for (const [p, status, text] of refusals) {
      const r = await get(l.server, p, { 'X-API-Key': l.key });
      expect([p, r.status, r.body]).toEqual([p, status, text]);
      // The document's paths name the methods; a watch with none, or another, is refused before them.
      if (!p.startsWith('/pdns/v2/watch/lookup') && p !== '/pdns/v2/watch') openapi.check(p, r);
    }
    openapi.check(watchPath('pay(pal'), bad);
    const noKey = await get(l.server, watchPath('x'));
    expect([noKey.status, noKey.body]).toEqual([403, 'Error: Bad API key\n']);
  }, 30_000);
});

describe('standing watches at shutdown, and in a process group', () => {
  it('SIGTERM ends every watch with its terminator', async () => {
    const l = await live();
    try {
      const names = new WatchClient(l.server.port, watchPath('bye'), l.key);
      const rdata = new WatchClient(l.server.port, '/pdns/v2/watch/regex/rdata/bye', l.key);
      await Promise.all([names.begun(), rdata.begun()]);
      await l.server.close();
      expect(await names.ended).toEqual({ complete: true });
      expect(await rdata.ended).toEqual({ complete: true });
      expect(names.body()).toBe(body(begin, shutdown));
      expect(rdata.body()).toBe(body(begin, shutdown));
    } finally {
      await l.close();
    }
  }, 60_000);

  it('--processes 2: each member serves its watches', async () => {
    const l = await live(['--processes', '2'], { RRSCAN_LOG_LEVEL: 'info' });
    try {
      const watches = Array.from({ length: 16 }, () => new WatchClient(l.server.port, watchPath('group'), l.key));
      await Promise.all(watches.map((w) => w.begun()));
      const t = now();
      await l.send(frame('n.group.live.test.', t));
      for (const w of watches) expect(await w.objectsAtLeast(1)).toEqual([rrname('n.group.live.test.', t).obj]);
      await l.server.close();
      for (const w of watches) expect(w.body()).toBe(body(begin, rrname('n.group.live.test.', t), shutdown));
      // Each watch's request line names the member that served it: both did.
      const members = new Set(logLines(l.server).filter((x) => x['msg'] === 'request').map((x) => x['member']));
      expect([...members].sort()).toEqual([0, 1]);
    } finally {
      await l.close();
    }
  }, 60_000);
});
