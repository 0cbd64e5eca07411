// id, swclient and version (spec 4.3): validated, logged with the request,
// and left out of the log for a key with query privacy (issue 3, issue 5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import { addKey, get, ingestNdjson, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';

let dir: string;
let server: Server;
let open: string;
let hidden: string;

beforeAll(async () => {
  dir = tempDir();
  ingestNdjson(dir, FLEX_FIXTURE);
  open = addKey(dir);
  hidden = addKey(dir, ['--unlimited', '--private']);
  server = await startServer(dir, [], { RRSCAN_LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await server?.close();
  removeDir(dir);
});

/** The server's `request` log records, once `n` of them have been written (pino writes asynchronously). */
async function requestLog(n: number): Promise<Record<string, unknown>[]> {
  for (let waited = 0; ; waited += 20) {
    const records = server.stderr().split('\n').filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['msg'] === 'request');
    if (records.length >= n || waited > 5_000) return records;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const CLIENT = 'id=analyst7:case42&swclient=dnsdbq&version=2.6.1-b_x';

describe('request log', () => {
  it('records pattern, id, swclient and version of a flexible search, and the path of a lookup', async () => {
    const flex = await get(server, `/pdns/v2/regex/rrnames/paypal?exclude=login&${CLIENT}`, { 'X-API-Key': open });
    expect(flex.status).toBe(200);
    const lookup = await get(server, `/pdns/v2/lookup/rrset/name/paypal.com?${CLIENT}`, { 'X-API-Key': open });
    expect(lookup.status).toBe(200);
    const [f, l] = (await requestLog(2)).slice(-2);
    expect(f).toMatchObject({ status: 200, method: 'regex', target: 'rrnames', pattern: 'paypal', exclude: 'login',
      id: 'analyst7:case42', swclient: 'dnsdbq', version: '2.6.1-b_x', results: 3, terminator: 'succeeded' });
    expect(l).toMatchObject({ status: 200, path: '/pdns/v2/lookup/rrset/name/paypal.com', id: 'analyst7:case42',
      swclient: 'dnsdbq', version: '2.6.1-b_x', results: 3, terminator: 'succeeded' });
    expect(typeof f!['key']).toBe('string');
    expect(server.stderr()).not.toContain(open);
  });

  it('leaves the query text out for a key with privacy: no pattern, path, id, swclient or version', async () => {
    const before = (await requestLog(0)).length;
    const logged = server.stderr().length;
    const r = await get(server, `/pdns/v2/glob/rrnames/*secretname*?${CLIENT}`, { 'X-API-Key': hidden });
    expect(r.status).toBe(200);
    const s = await get(server, '/pdns/v2/lookup/rrset/name/secretlookup.example?id=a:b', { 'X-API-Key': hidden });
    expect(s.status).toBe(200);
    const records = (await requestLog(before + 2)).slice(before);
    expect(records.map((x) => Object.keys(x).filter((k) => !['level', 'time', 'msg', 'ms'].includes(k)).sort())).toEqual([
      ['key', 'results', 'status', 'terminator'],
      ['key', 'results', 'status', 'terminator'],
    ]);
    expect(server.stderr().slice(logged)).not.toMatch(/secretname|secretlookup|analyst7|dnsdbq/);
  });
});

describe('id, swclient and version values (spec 4.3 and 7)', () => {
  const bad = [
    'id=nocolon', 'id=a:b:c', 'id=a%20b:c', `id=${'a'.repeat(15)}:${'b'.repeat(15)}`, 'id=',
    'swclient=dnsdb-q', `swclient=${'s'.repeat(21)}`,
    'version=1%2F2', `version=${'1'.repeat(21)}`,
  ];
  for (const q of bad) {
    it(`refuses ${q.length > 40 ? `${q.slice(0, 40)}...` : q} on flexible and standard search`, async () => {
      for (const p of ['/pdns/v2/regex/rrnames/paypal', '/pdns/v2/lookup/rrset/name/paypal.com']) {
        const r = await get(server, `${p}?${q}`, { 'X-API-Key': open });
        expect([r.status, r.headers['content-type'], r.body])
          .toEqual([400, 'text/plain; charset=utf-8', 'Error: unable to parse request\n']);
      }
    });
  }

  it('accepts the longest values the spec allows', async () => {
    const q = `id=${'a'.repeat(14)}:${'b'.repeat(15)}&swclient=${'s'.repeat(20)}&version=${'v.-_'.repeat(5)}`;
    for (const p of ['/pdns/v2/regex/rrnames/paypal', '/pdns/v2/lookup/rrset/name/paypal.com']) {
      expect((await get(server, `${p}?${q}`, { 'X-API-Key': open })).status).toBe(200);
    }
  });
});
