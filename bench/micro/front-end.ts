// Micro-benchmark: what the front end's own JavaScript costs per request,
// without uWS, sockets or a load generator (issue 22). The real FrontEnd
// (src/server/app.ts) over the real local backend and key store answers
// requests given to it as uWS would, through stand-ins for uWS's
// HttpRequest and HttpResponse that record what is written; 64 requests a
// turn of the event loop (the keep-alive connections of bench/request-path.ts's
// wrk), so that batches that wait for the next turn (quota charges, the
// request log) batch as they do under load. Prints nanoseconds per request,
// the best of --rounds, for ping, an exact lookup with an unlimited and a
// daily key, rate_limit, and a 1,000-row wildcard lookup; unlike req/s
// under wrk this moves little with whatever else the machine runs, and it
// leaves out what uWS and the kernel cost (bench/request-path.ts has all).
// The request log is on (level info) unless RRSCAN_LOG_LEVEL says otherwise;
// its lines go to stderr: redirect it (2>/dev/null, or a file).
//
//   npm run build && node dist/bench/micro/front-end.js [--data bench/out/flex-2000000] [--requests 20000] [--rounds 5]
//     [--only 'LABEL|LABEL'] 2>/dev/null

import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { addKey } from '../../src/auth/key-admin.js';
import { AccessGate } from '../../src/auth/access-gate.js';
import { sqliteKeyStoreConfig } from '../../src/auth/stores/open-key-store.js';
import { LIMITS } from '../../src/config/limits.js';
import { LocalBackend } from '../../src/search/local/local-backend.js';
import { FrontEnd } from '../../src/server/app.js';
import { ServingStats } from '../../src/server/serving-stats.js';
import type { HttpRequest, HttpResponse } from '../../src/lib/uws.js';
import { OUT, arg, fmt } from '../common.js';
import { readFileSync } from 'node:fs';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const requests = Number(arg('requests', '20000'));
const rounds = Number(arg('rounds', '5'));
const only = arg('only', '');
const PER_TURN = 64;

/** A new string of the same text, as uWS hands over for every request (V8 caches what it knows of a string it has seen). */
const fresh = (s: string): string => (s === '' ? s : ` ${s}`.slice(1));

/** What uWS would hand the handler: the request line and headers. */
function request(url: string, query: string, headers: Record<string, string>): HttpRequest {
  return {
    getUrl: () => fresh(url), getQuery: () => fresh(query), getMethod: () => 'get', getCaseSensitiveMethod: () => 'GET',
    getHeader: (name: string) => fresh(headers[name] ?? ''),
  } as unknown as HttpRequest;
}

/** Counts answers and their bytes; every write is taken at once (a reader that keeps up). */
class Response {
  static answers = 0;
  static bytes = 0;
  static lastBody = '';
  onAborted(): this { return this; }
  onWritable(): this { return this; }
  cork(f: () => void): this { f(); return this; }
  writeStatus(): this { return this; }
  writeHeader(): this { return this; }
  write(chunk: string | Uint8Array): boolean { Response.bytes += chunk.length; return true; }
  end(body?: string | Uint8Array): this {
    Response.answers++;
    if (body !== undefined) {
      Response.bytes += body.length;
      Response.lastBody = typeof body === 'string' ? body : Buffer.from(body).toString('latin1');
    }
    return this;
  }
  endWithoutBody(): this { Response.answers++; return this; }
  tryEnd(): [boolean, boolean] { return [true, true]; }
  close(): this { return this; }
  getRemoteAddressAsText(): ArrayBuffer { return new TextEncoder().encode('127.0.0.1').buffer; }
}

async function run(front: FrontEnd, req: HttpRequest, n: number): Promise<number> {
  const before = Response.answers;
  const t0 = performance.now();
  for (let i = 0; i < n; i += PER_TURN) {
    for (let j = 0; j < PER_TURN; j++) front.onGet(new Response() as unknown as HttpResponse, req);
    await nextTurn();
  }
  // Answers still waiting (a charge, a turn: lib/turns.ts lets one stream go on per loop iteration) end within some turns.
  const waitUntil = performance.now() + 30_000;
  while (Response.answers - before < n && performance.now() < waitUntil) await nextTurn();
  const ns = ((performance.now() - t0) * 1e6) / n;
  if (Response.answers - before < n) throw new Error(`${n - (Response.answers - before)} requests unanswered`);
  return ns;
}

async function main(): Promise<void> {
  const names = readFileSync(path.join(dataDir, 'names.txt'), 'utf8').split('\n', 8);
  const store = sqliteKeyStoreConfig(dataDir);
  const unlimited = await addKey(store, { quota: { kind: 'unlimited' }, resultsMax: 1_000_000 });
  const daily = await addKey(store, { quota: { kind: 'daily', limit: 1_000_000_000 } });
  const backend = new LocalBackend({ dataDir, threads: 1 });
  await backend.notReady();
  const gate = AccessGate.open(store);
  const front = new FrontEnd(backend, gate, LIMITS.keepAliveMs, LIMITS.searchTimeoutMs, new ServingStats());
  const cases: [string, HttpRequest, number][] = [
    ['ping', request('/pdns/v2/ping', '', {}), requests],
    ['exact lookup, unlimited key', request(`/pdns/v2/lookup/rrset/name/${names[7]}`, '', { 'x-api-key': unlimited }), requests],
    ['exact lookup, daily key', request(`/pdns/v2/lookup/rrset/name/${names[7]}`, '', { 'x-api-key': daily }), requests],
    ['rate_limit, unlimited key', request('/pdns/v2/rate_limit', '', { 'x-api-key': unlimited }), requests],
    ['rate_limit, daily key', request('/pdns/v2/rate_limit', '', { 'x-api-key': daily }), requests],
    ['1,000-row wildcard lookup', request('/pdns/v2/lookup/rrset/name/*.com.', 'limit=1000', { 'x-api-key': unlimited }),
      Math.ceil(requests / 200)],
  ];
  console.log(`command: node dist/bench/micro/front-end.js --data ${dataDir} --requests ${requests} --rounds ${rounds}` +
    (only !== '' ? ` --only ${only}` : ''));
  console.log(`node ${process.version}; request log ${process.env['RRSCAN_LOG_LEVEL'] ?? 'info'}; ${PER_TURN} requests a turn; ` +
    `best of ${rounds} rounds, after one warm-up round`);
  try {
    for (const [label, req, n] of cases) {
      if (only !== '' && !only.split('|').some((o) => label.startsWith(o))) continue;
      await run(front, req, n);
      const times: number[] = [];
      for (let r = 0; r < rounds; r++) times.push(await run(front, req, n));
      const best = Math.min(...times);
      const each = times.map((t) => fmt(t / 1000, 2)).join(' ');
      console.log(`${label.padEnd(30)} ${fmt(best / 1000, 2).padStart(8)} us/request  (rounds: ${each}; ` +
        `answer ${Response.lastBody.length} bytes)`);
    }
  } finally {
    gate.close();
    await backend.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
