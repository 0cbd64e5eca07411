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

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameToWire } from '../../src/dns/name.js';
import { STREAM_MESSAGES } from '../../src/errors/catalogue.js';
import { FrameSender, startReceiver, waitForResults, type Receiver } from '../helpers/live-ingest.js';
import { addKey, begin, body, get, limited, logLines, startServer, tempPaths, type Server } from '../helpers/rrscan.js';
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

async function live(serveFlags: string[] = []): Promise<Live> {
  const d = fresh();
  const data = path.join(d, 'data');
  const receiver = await startReceiver(data, ['tcp:127.0.0.1:0']);
  const key = addKey(data);
  const server = await startServer(data, serveFlags);
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
});
