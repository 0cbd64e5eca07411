// Fuzz target: the HTTP front end of a real server process (dist/, started
// by test/helpers startServer over the small flex dataset).
//
// Generated requests (the router target's paths, query strings and Accept
// headers, encoded so that an HTTP request line can carry them) are sent
// with a valid key, a bad key or none. Properties:
// - the status is the one the parsing functions give the same request
//   (request-gen.ts answerOf), with authentication in its place (403 for a
//   search or rate_limit without a good key, after 400/404/415 and before
//   416); never 500;
// - an error has exactly the catalogue's body and content type;
// - a 200 search is a well-framed stream: `begin` first, one terminator
//   last, never the internal-error terminator;
// - the server stays up: ping answers afterwards and it logged no error.

import fc from 'fast-check';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STREAM_MESSAGES } from '../../src/errors/catalogue.js';
import type { KeyWindow } from '../../src/query/params.js';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import { addKey, ingestNdjson, lines, startServer, tempPaths, type Server } from '../helpers/rrscan.js';
import { checkAsyncProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { answerOf, catalogueReply, requestArb, type Request } from './request-gen.js';

const RUNS = runsFor(300);

const paths = tempPaths();
let server: Server;
let key: string;
let window: KeyWindow;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

interface Reply {
  status: number;
  contentType: string;
  body: string;
}

function send(path: string, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8'),
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const dir = paths.fresh();
  ingestNdjson(dir, FLEX_FIXTURE);
  key = addKey(dir, ['--unlimited', '--offset-max', '1000']);
  server = await startServer(dir);
  // The licence the oracle applies is the key's own, as the server reports it.
  const rate = JSON.parse((await send('/pdns/v2/rate_limit', { 'X-API-Key': key })).body) as { rate: Record<string, unknown> };
  window = {
    resultsMax: Number(rate.rate['results_max']), offsetMax: Number(rate.rate['offset_max']), timeFenceAfter: undefined,
    timeFenceBefore: undefined,
  };
});

afterAll(async () => {
  agent.destroy();
  await server?.close();
  paths.removeAll();
});

type KeyKind = 'valid' | 'missing' | 'bad';

/** The status and catalogue code the server must answer with. */
function expected(req: Request, keyKind: KeyKind): { status: number; code: string | undefined } {
  const a = answerOf(req, window);
  const needsKey = a.route === 'rate_limit' || a.route === 'flex' || a.route === 'lookup' || a.route === 'summarize';
  // Authentication comes after parsing (400, 404, 415, and the 416 of an offset on summarize) and before the
  // licence (the 416 of an offset past the key's offset_max).
  if (keyKind !== 'valid' && needsKey && (a.status === 200 || a.licence === true)) return { status: 403, code: 'BAD_API_KEY' };
  return { status: a.status, code: a.code };
}

describe('fuzz: HTTP front end', () => {
  test('every request gets the status the parsers give it, catalogue bodies, framed streams; never 500', async () => {
    const arb = fc.tuple(requestArb(true), fc.constantFrom<KeyKind>('valid', 'valid', 'valid', 'missing', 'bad'));
    await checkAsyncProperty('http', RUNS, fc.asyncProperty(arb, async ([req0, keyKind]) => {
      // A request line's target starts with '/'; anything else is the HTTP parser's business, not ours.
      const req = req0.path.startsWith('/') ? req0 : { ...req0, path: `/${req0.path}` };
      const headers: Record<string, string> = {};
      if (req.accept !== '') headers['Accept'] = req.accept;
      if (keyKind === 'valid') headers['X-API-Key'] = key;
      if (keyKind === 'bad') headers['X-API-Key'] = '0123456789abcdef0123456789abcdef';
      const reply = await send(req.query === '' ? req.path : `${req.path}?${req.query}`, headers);
      const want = expected(req, keyKind);
      const what = `${req.path}?${req.query} (Accept ${JSON.stringify(req.accept)}, key ${keyKind})`;
      expect(reply.status, `${what}: ${reply.body.slice(0, 200)}`).not.toBe(500);
      expect({ what, status: reply.status }).toEqual({ what, status: want.status });
      if (want.code !== undefined) {
        const c = catalogueReply(want.code as Parameters<typeof catalogueReply>[0]);
        expect({ what, contentType: reply.contentType, body: reply.body }).toEqual({ what, contentType: c.contentType, body: c.body });
        return;
      }
      if (reply.contentType !== 'application/x-ndjson') return; // ping and rate_limit: one JSON object
      const stream = lines(reply.body) as { cond?: string; msg?: string }[];
      expect(stream[0], what).toEqual({ cond: 'begin' });
      const end = stream[stream.length - 1]!;
      expect(['succeeded', 'limited', 'failed'], what).toContain(end.cond);
      expect(stream.slice(1, -1).every((l) => l.cond === undefined), what).toBe(true);
      if (end.cond === 'failed') {
        expect(end.msg, what).not.toBe(STREAM_MESSAGES.INTERNAL);
        expect(end.msg, what).toMatch(/^invalid (regular expression|glob) at position \d+: /);
      }
    }), 30_000);

    // Still up, and nothing it logged was an error.
    expect(JSON.parse((await send('/pdns/v2/ping', {})).body)).toEqual({ ping: 'ok' });
    expect(server.proc.exitCode).toBeNull();
    expect(server.stderr()).not.toMatch(/"level":(50|60)/);
  }, FUZZ_TIMEOUT_MS);
});
