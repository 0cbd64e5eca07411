// The ClickHouse HTTP client (src/clickhouse/client.ts) against a real
// server: a keep-alive connection that ClickHouse closed while this process
// was too busy to notice (its thread held longer than the server's
// keep_alive_timeout, 10 s by default on 18.16, as an ingest between
// batches or a test in spawnSync can) must not fail the next statement: it
// is sent again on a new connection. The server here closes idle
// connections after 3 s (Node would drop a socket that a server says it
// keeps for only 1 s before reusing it), so the test need not wait 10.
// Also: a streamed SELECT's rows go through the shared line reader
// (lib/line-reader.ts), whole and within LIMITS.clickhouseRowBytesMax.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse } from '../../src/clickhouse/client.js';
import { LIMITS } from '../../src/config/limits.js';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);

/** The test server's keep_alive_timeout, seconds. */
const KEEP_ALIVE_S = 3;
/** Longer than that: the server closes the idle connection meanwhile, and this process cannot see it. */
const BUSY_MS = 3_600;

/** Holds this thread, as synchronous work does: timers and socket events wait. */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* spin */ }
}

describe.skipIf(!HAVE_CLICKHOUSE)('the ClickHouse client and keep-alive connections', () => {
  let server: ClickHouseServer;
  let ch: ClickHouse;

  beforeAll(async () => {
    server = await startClickHouse(undefined, `<keep_alive_timeout>${KEEP_ALIVE_S}</keep_alive_timeout>`);
    ch = new ClickHouse(server.url);
  }, 60_000);

  afterAll(async () => {
    ch?.close();
    await server?.close();
  });

  it('a statement after the process was busy past keep_alive_timeout succeeds (sent again on a new connection)', async () => {
    for (let i = 0; i < 2; i++) {
      expect(await ch.exec('SELECT 1')).toBe('1\n');
      busy(BUSY_MS);
      expect(await ch.exec(`SELECT ${i + 2}`)).toBe(`${i + 2}\n`);
    }
  }, 60_000);

  it('and a streamed SELECT too', async () => {
    expect(await ch.exec('SELECT 1')).toBe('1\n');
    busy(BUSY_MS);
    const lines = await new Promise<string[]>((resolve, reject) => {
      const got: string[] = [];
      ch.select('SELECT number FROM system.numbers LIMIT 3 FORMAT TabSeparated', {
        lines: (l) => { got.push(...l); return true; },
        end: () => resolve(got),
        error: reject,
      });
    });
    expect(lines).toEqual(['0', '1', '2']);
  }, 60_000);

  /** A streamed SELECT's lines, or its error's message. */
  const selected = (sql: string): Promise<string[] | string> => new Promise((resolve) => {
    const got: string[] = [];
    ch.select(sql, { lines: (l) => { got.push(...l); return true; }, end: () => resolve(got), error: (e) => resolve(e.message) });
  });

  it('streamed rows are read whole by the line reader, UTF-8 cut by the socket\'s chunks included', async () => {
    const rows = await selected("SELECT concat(toString(number), ' ', arrayStringConcat(arrayMap(x -> 'é', range(40000)))) " +
      'FROM system.numbers LIMIT 5 FORMAT TabSeparated');
    expect(rows).toEqual([0, 1, 2, 3, 4].map((n) => `${n} ${'é'.repeat(40_000)}`));
  }, 60_000);

  it('a row longer than clickhouseRowBytesMax fails the SELECT with the line reader\'s wording', async () => {
    const max = LIMITS.clickhouseRowBytesMax;
    // 18.16 has no repeat(): a FixedString of NULs, which TabSeparated writes as two bytes each (\\0).
    expect(await selected(`SELECT number, toFixedString('', ${max / 2 + 1}) FROM system.numbers LIMIT 2 FORMAT TabSeparated`))
      .toBe(`answer line 1: line longer than ${max} bytes`);
  }, 60_000);
});
