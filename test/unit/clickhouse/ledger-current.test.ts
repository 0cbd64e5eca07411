// The ClickHouse input ledger's SQL on a current ClickHouse (26.7, in
// process through chdb), as test/integration/clickhouse-ledger.test.ts runs
// it on Debian's 18.16: the table init makes, the latest run of a file, a
// withdrawn run ignored, claim() in the race window.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { afterAll, describe, expect, it } from 'vitest';
import { ClickHouseLedger, type LedgerClient } from '../../../src/clickhouse/ledger.js';
import { LEDGER_TABLE, schemaStatements } from '../../../src/clickhouse/schema.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-chdb-'));
const session = new Session(dir);
afterAll(() => {
  session.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** chdb as the ledger's client: statements carry their own FORMAT; settings (insert_distributed_sync) do not apply here. */
const client: LedgerClient = {
  url: 'chdb',
  exec: (sql: string) => Promise.resolve(session.query(sql, 'TabSeparated')),
};

describe('the input ledger on ClickHouse 26.7 (chdb)', () => {
  it('init makes the ledger table; started, done, a later run, a withdrawn one, claim', async () => {
    const statements = schemaStatements({ database: 'rrscan' });
    await client.exec(statements[0]!);
    // Only the ledger's statement: this test is about its SQL.
    for (const sql of statements.filter((s) => s.includes(`.${LEDGER_TABLE} `))) await client.exec(sql);
    const input = { sha256: 'a'.repeat(64), name: "/in/it's\\here", bytes: 7 };
    const [x, y] = await Promise.all([ClickHouseLedger.open(client, 'rrscan'), ClickHouseLedger.open(client, 'rrscan')]);
    expect(await x.state(input.sha256)).toBeUndefined();
    await x.started(input);
    expect(await y.state(input.sha256)).toMatchObject({ state: 'started', name: input.name });
    await new Promise((r) => setTimeout(r, 5));
    await y.started(input);
    expect(await y.claim(input)).toBe(false);
    expect(await x.claim(input)).toBe(true);
    await x.done(input);
    expect(await y.state(input.sha256)).toMatchObject({ state: 'done', name: input.name });
  });
});
