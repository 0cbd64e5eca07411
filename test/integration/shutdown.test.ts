// SIGTERM with slow readers (issue 21, "SIGTERM cuts slow readers without a
// terminator"): two readers taking a large answer slowly had their streams
// end mid-object when the process exited with their answers still
// buffered. Every open stream must get its terminator once its reader has
// taken what was buffered before it, within --shutdown-grace-ms; one still
// undrained then is cut, and logged and counted as cut, not as failed.
//
// Real processes and real sockets: `rrscan serve` as a child, raw TCP
// readers that take the answer at a set rate or stop reading (the kernel
// pushes back on the server as it would for a slow client), a real SIGTERM.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addKey, ingestNdjson, lines, logLines, randomNames, startServer, tempPaths, type Server,
} from '../helpers/rrscan.js';
import { rawRequest, type RawReply } from '../helpers/raw-http.js';

const temp = tempPaths();
let dir: string;
let key: string;

/** Every name: about 4 MB of answer, far more than the socket buffers hold, so a slow reader is still reading at SIGTERM. */
const ALL = '/pdns/v2/regex/rrnames/.?limit=0';
const SHUTDOWN_LINE = '{"cond":"failed","msg":"Server is shutting down"}';
/** RE2 falls back to its NFA on this one and no name has a `_`: a scan that runs, finding nothing, for a while. */
const SLOW = '/pdns/v2/regex/rrnames/' + encodeURIComponent('(?:[a-f][^.]{20}|[0-9][^.]{20})[^.]{10}_');

beforeAll(() => {
  dir = temp.fresh();
  ingestNdjson(dir, randomNames(50_000, 'drain.example.', 20_261_126).map((rrname) => ({
    count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000, rrname, rrtype: 'A', bailiwick: 'drain.example.', rdata: ['192.0.2.1'],
  })));
  key = addKey(dir, ['--unlimited', '--results-max', '1000000']);
});

afterAll(() => temp.removeAll());

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`;

function exited(server: Server): Promise<{ code: number | null; ms: number }> {
  return new Promise((resolve) => server.proc.once('exit', (code) => resolve({ code, ms: performance.now() })));
}

/** The stream's lines, the last one separately; throws on a line that is not whole JSON (a stream cut mid-object). */
function framing(reply: RawReply): { conds: unknown[]; last: string } {
  const parsed = lines(reply.body) as Record<string, unknown>[];
  const text = reply.body.slice(0, -1).split('\n');
  return { conds: parsed.filter((l) => 'cond' in l), last: text[text.length - 1]! };
}

/** A stream that ends with the shutdown terminator drained ('failed', as its log line says); one with no terminator was cut. */
function fateOf(reply: RawReply): 'failed' | 'cut' {
  expect(reply.closed).toBe(true);
  if (reply.complete) {
    expect(framing(reply).last).toBe(SHUTDOWN_LINE);
    return 'failed';
  }
  expect(reply.body).not.toMatch(/"cond":"(failed|succeeded|limited)"/);
  return 'cut';
}

function requestLog(server: Server): Record<string, unknown>[] {
  return logLines(server).filter((l) => l['msg'] === 'request');
}

describe('SIGTERM with slow readers', () => {
  it('drains two slow readers: each answer ends with exactly one whole terminator line, then the process exits 0', async () => {
    const server = await startServer(dir, ['--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' });
    const exit = exited(server);
    const readers = [rawRequest(server.port, get(ALL), { stallAfterBytes: 100_000 }),
      rawRequest(server.port, get(ALL), { stallAfterBytes: 100_000 })];
    await Promise.all(readers.map((r) => r.until(100_000)));
    // The readers pause: the kernel's buffers fill, and uWS keeps the part of a write chunk the kernel did not take.
    await new Promise((r) => setTimeout(r, 1_000));
    const signalled = performance.now();
    server.proc.kill('SIGTERM');
    // Before the fix the process was gone within 50 ms, and with it what uWS held for a stream whose socket could not
    // take it at once: that answer ended mid-object (in one run of five to two of two with this fixture; the kernel often
    // takes uWS's rest into the last unsent segment, which the fix's first try uses too).
    await new Promise((r) => setTimeout(r, 500));
    for (const r of readers) r.readAt(50_000);
    const { code, ms } = await exit;
    // What the kernel still holds for them needs no process: taken at full speed, to keep the test short.
    for (const r of readers) r.resume();
    const replies = await Promise.all(readers.map((r) => r.done));
    for (const reply of replies) {
      expect(reply.statusLine).toBe('HTTP/1.1 200 OK');
      expect(reply.complete, 'the chunked body ended with its last chunk').toBe(true);
      const { conds, last } = framing(reply);
      expect(conds).toEqual([{ cond: 'begin' }, { cond: 'failed', msg: 'Server is shutting down' }]);
      expect(last).toBe(SHUTDOWN_LINE);
      // The answer was cut short by the shutdown, not complete before it.
      expect(reply.body.length).toBeLessThan(3_000_000);
    }
    expect(code).toBe(0);
    // It waited for the readers, not for the 30 s grace.
    expect(ms - signalled).toBeLessThan(20_000);
    const log = logLines(server);
    expect(log.find((l) => String(l['msg']).startsWith('shutdown:'))).toMatchObject({
      msg: 'shutdown: open streams ended', drained: 2, cut: 0, hangups: 0, graceMs: 30_000,
    });
    expect(requestLog(server).map((l) => l['terminator'])).toEqual(['failed', 'failed']);
  }, 60_000);

  it('an HTTP/1.0 search running at SIGTERM gets its whole answer, ending with the terminator, and the connection closed', async () => {
    const server = await startServer(dir, ['--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' });
    const exit = exited(server);
    const r = rawRequest(server.port, `GET ${SLOW} HTTP/1.0\r\nX-API-Key: ${key}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // An HTTP/1.0 answer goes whole, at its end: nothing yet.
    expect(r.received()).toBe(0);
    server.proc.kill('SIGTERM');
    const reply = await r.done;
    expect((await exit).code).toBe(0);
    const want = `{"cond":"begin"}\n${SHUTDOWN_LINE}\n`;
    expect(reply).toMatchObject({
      statusLine: 'HTTP/1.1 200 OK', body: want, complete: true, closed: true,
    });
    expect(reply.headers).toContain('Connection: close');
    expect(reply.headers).toContain(`Content-Length: ${want.length}`);
    expect(requestLog(server).map((l) => l['terminator'])).toEqual(['failed']);
  }, 60_000);

  it('cuts readers that stopped reading when a short grace runs out: the log says cut, not failed; exit 0', async () => {
    // Whether a stalled stream can still drain depends on the kernel: it may take what uWS holds into the last unsent
    // segment (one stream in four here), and then the terminator is in the socket and the stream is not cut. Four
    // stalled readers a round, up to three rounds, until one is cut (all drained three times: p < 1e-7).
    let rounds = 0;
    let cut = 0;
    while (cut === 0 && rounds++ < 3) {
      const server = await startServer(dir, ['--workers', '1', '--shutdown-grace-ms', '500'], { RRSCAN_LOG_LEVEL: 'info' });
      const exit = exited(server);
      const stalled = Array.from({ length: 4 }, () => rawRequest(server.port, get(ALL), { stallAfterBytes: 100_000 }));
      await Promise.all(stalled.map((r) => r.until(100_000)));
      // The kernel's buffers and uWS's fill up: the server is pushed back and still producing.
      await new Promise((r) => setTimeout(r, 1_000));
      const signalled = performance.now();
      server.proc.kill('SIGTERM');
      const { code, ms } = await exit;
      expect(code).toBe(0);
      for (const r of stalled) r.resume();
      const fates = (await Promise.all(stalled.map((r) => r.done))).map(fateOf);
      cut = fates.filter((f) => f === 'cut').length;
      expect(requestLog(server).map((l) => l['terminator']).sort()).toEqual(fates.sort());
      const summary = logLines(server).find((l) => String(l['msg']).startsWith('shutdown:'));
      if (cut === 0) {
        expect(summary).toMatchObject({ msg: 'shutdown: open streams ended', drained: 4, cut: 0 });
        continue;
      }
      expect(ms - signalled).toBeGreaterThanOrEqual(450);
      expect(ms - signalled).toBeLessThan(5_000);
      expect(summary).toMatchObject({
        level: 40, msg: 'shutdown: streams cut, their readers had not drained them within the grace', drained: 4 - cut, cut, graceMs: 500,
      });
    }
    expect(cut, 'a stalled stream was cut').toBeGreaterThan(0);
  }, 120_000);

  it('--processes 2: members drain a slow reader and cut stalled ones within the grace; the group exits 0', async () => {
    let rounds = 0;
    let cut = 0;
    while (cut === 0 && rounds++ < 3) {
      const group = await startServer(dir, ['--processes', '2', '--workers', '1', '--shutdown-grace-ms', '4000'],
        { RRSCAN_LOG_LEVEL: 'info' });
      const exit = exited(group);
      const slow = rawRequest(group.port, get(ALL), { stallAfterBytes: 100_000 });
      const stalled = Array.from({ length: 3 }, () => rawRequest(group.port, get(ALL), { stallAfterBytes: 100_000 }));
      await Promise.all([slow, ...stalled].map((r) => r.until(100_000)));
      await new Promise((r) => setTimeout(r, 1_000));
      slow.readAt(200_000);
      const signalled = performance.now();
      group.proc.kill('SIGTERM');
      const { code, ms } = await exit;
      expect(code).toBe(0);
      for (const r of [slow, ...stalled]) r.resume();
      const reply = await slow.done;
      expect(framing(reply).last).toBe(SHUTDOWN_LINE);
      expect(reply.complete).toBe(true);
      const fates = (await Promise.all(stalled.map((r) => r.done))).map(fateOf);
      cut = fates.filter((f) => f === 'cut').length;
      expect(requestLog(group).map((l) => l['terminator']).sort()).toEqual(['failed', ...fates].sort());
      // The supervisor waited for its members (grace + margin), and did not have to kill one.
      if (cut > 0) expect(ms - signalled).toBeGreaterThanOrEqual(3_900);
      expect(ms - signalled).toBeLessThan(4_000 + 5_000);
      expect(logLines(group).some((l) => /still running past its shutdown grace/.test(String(l['msg'])))).toBe(false);
    }
    expect(cut, 'a stalled stream was cut').toBeGreaterThan(0);
  }, 180_000);
});
