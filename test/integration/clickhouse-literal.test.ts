// Every literal the escaping function writes (src/clickhouse/literal.ts) is
// read back by a real ClickHouse as exactly the value it was made from:
// generated strings (any code point) and byte strings (invalid UTF-8
// included) go through `SELECT hex(<literal>)` on a private clickhouse-server
// and come back as the hex of their UTF-8 form or of the bytes. On Debian's
// clickhouse-server (18.16) and on ClickHouse 26.7 through chdb
// (helpers/chdb-http.ts): the parser of both must read them alike.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse } from '../../src/clickhouse/client.js';
import { sqlString } from '../../src/clickhouse/literal.js';
import { LIMITS } from '../../src/config/limits.js';
import { CHDB_SKIP_REASON, HAVE_CHDB, startChdbHttp } from '../helpers/chdb-http.js';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseUnderTest } from '../helpers/clickhouse-server.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);
if (!HAVE_CHDB) console.warn(CHDB_SKIP_REASON);

const RELEASES = [
  { release: "Debian's clickhouse-server", have: HAVE_CLICKHOUSE, start: (): Promise<ClickHouseUnderTest> => startClickHouse() },
  { release: 'ClickHouse 26.7 through chdb', have: HAVE_CHDB, start: (): Promise<ClickHouseUnderTest> => startChdbHttp() },
];

for (const { release, have, start } of RELEASES) describe.skipIf(!have)(`${release} reads every literal back as its value`, () => {
  let server: ClickHouseUnderTest;
  let ch: ClickHouse;

  beforeAll(async () => {
    server = await start();
    ch = new ClickHouse(server.url);
  }, 60_000);

  afterAll(async () => {
    ch?.close();
    await server?.close();
  });

  /** The hex ClickHouse gives for each value, in one statement. */
  async function hexOf(values: readonly (string | Uint8Array)[]): Promise<string[]> {
    const text = await ch.exec(`SELECT ${values.map((v) => `hex(${sqlString(v)})`).join(', ')} FORMAT TabSeparated`);
    return text.replace(/\n$/, '').split('\t');
  }

  const hex = (v: string | Uint8Array) => Buffer.from(typeof v === 'string' ? Buffer.from(v, 'utf8') : v).toString('hex').toUpperCase();

  it('quotes, backslashes, NUL, control characters, non-ASCII and the empty string', async () => {
    const values = ["'", "\\'", '\\', "''", '\u0000', 'a\u0000b', '\n\t\r\b\f', '\\x41', 'é\u{1F600}', '', "');DROP TABLE x;--"];
    expect(await hexOf(values)).toEqual(values.map(hex));
  });

  it('bytes that are not UTF-8', async () => {
    const values = [Uint8Array.of(0xff), Uint8Array.of(0xc3), Uint8Array.of(0x80, 0x00, 0x27, 0x5c)];
    expect(await hexOf(values)).toEqual(values.map(hex));
  });

  it('a value at the length bound', async () => {
    const v = `'\\${'x'.repeat(LIMITS.clickhouseLiteralBytesMax - 2)}`;
    expect(await hexOf([v])).toEqual([hex(v)]);
  });

  it('property: generated strings and byte strings round trip', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 40 })), { minLength: 1, maxLength: 50 }),
      async (values) => {
        expect(await hexOf(values)).toEqual(values.map(hex));
      }), { numRuns: 40 });
  });
});
