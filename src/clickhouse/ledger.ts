// The input ledger of a ClickHouse database: which input files were sent to
// it, by the SHA-256 of their bytes (as the local ledger, shard/ledger.ts).
//
// An ingest into ClickHouse is many INSERTs, not one swap, so each file's
// ingest is recorded twice: `started` before its first batch and `done`
// after its last one returned (for a cluster, after every shard has its rows:
// insert_distributed_sync). Rows are only ever added (a plain MergeTree
// keeps them all), and a read groups them by run, so it sees the latest
// state whether or not merges have run. The latest run of a file decides:
// done, the file is in; started without done, an ingest died or failed part
// way and some of its rows may be there.
//
// With a cluster, ingest_ledger_all (a Distributed table placing rows by
// digest) is the one ledger every node reads and writes: a file's rows all
// live on one shard, and when that shard is down the read fails, so a file
// is never taken for new because its ledger could not be seen. (A table on
// the first shard alone would need every ingest to know which node that is.)
//
// ClickHouse 18.16 offers no lock without ZooKeeper, so two ingests of one
// file at the same moment could both find nothing and both send it. Hence
// claim(): after writing `started`, a run looks again; of the runs that
// started the file, the first (by start time, then run id) sends it, and any
// other withdraws (state 3, which reads ignore) and skips the file. A run
// that finds an unfinished one refuses the file, running or dead alike: it
// cannot tell them apart. (Clocks of two ingest hosts more apart than the
// window between a check and its `started` row could still let both send.)

import { randomUUID } from 'node:crypto';
import type { ClickHouse } from './client.js';
import { LIMITS } from '../config/limits.js';
import { ClickHouseError } from '../errors/catalogue.js';
import { sqlIdentifier, sqlString } from './literal.js';
import { DISTRIBUTED_SUFFIX, LEDGER_TABLE } from './schema.js';
import { tsvField } from './tab-separated.js';

const STARTED = 1;
const DONE = 2;
const WITHDRAWN = 3;
/** The runs of one digest that count, as (max state, start time, run) rows. */
const runsOf = (table: string, sha256: string) => `SELECT max(state) AS last_state, min(at) AS started, any(name), run FROM ${table} ` +
  `WHERE sha256 = ${sqlString(sha256)} GROUP BY run HAVING last_state < ${WITHDRAWN}`;

/** What the ledger says of one file: its latest run, or nothing. */
export interface LedgerState {
  state: 'started' | 'done';
  /** When that run started, ms since the epoch. */
  at: number;
  name: string;
}

export class ClickHouseLedger {
  /** This ingest run's id in the ledger. */
  readonly run = randomUUID();

  private constructor(private readonly ch: ClickHouse, private readonly table: string, private readonly distributed: boolean) {}

  /** The ledger of `database` (its Distributed table when init made one); fails, naming the fix, when there is none. */
  static async open(ch: ClickHouse, database: string): Promise<ClickHouseLedger> {
    const names = (await ch.exec(`SELECT name FROM system.tables WHERE database = ${sqlString(database)} ` +
      `AND name IN (${sqlString(LEDGER_TABLE)}, ${sqlString(LEDGER_TABLE + DISTRIBUTED_SUFFIX)}) FORMAT TabSeparated`))
      .split('\n').filter((n) => n !== '');
    if (names.length === 0) {
      throw new ClickHouseError(`${ch.url}: no input ledger in database ${database} (run \`rrscan clickhouse init\` again: ` +
        'it adds the tables that are missing)');
    }
    const distributed = names.includes(LEDGER_TABLE + DISTRIBUTED_SUFFIX);
    return new ClickHouseLedger(ch, `${sqlIdentifier(database)}.${distributed ? LEDGER_TABLE + DISTRIBUTED_SUFFIX : LEDGER_TABLE}`,
      distributed);
  }

  /** The latest run's state for `sha256`, or undefined when no run ever started it. */
  async state(sha256: string): Promise<LedgerState | undefined> {
    const line = (await this.ch.exec(`${runsOf(this.table, sha256)} ORDER BY started DESC, run DESC LIMIT 1 FORMAT TabSeparated`))
      .trimEnd();
    if (line === '') return undefined;
    const [state, at, name] = line.split('\t');
    return { state: Number(state) === DONE ? 'done' : 'started', at: Number(at), name: tsvField(name ?? '') };
  }

  /**
   * After started(): whether this run is the first of those that started the
   * file and have not withdrawn (see the top). When not, it withdraws.
   *
   * With replicas, a read may reach a replica that has not yet fetched the
   * row started() wrote to another (replication is asynchronous), and a run
   * that took "not first" from such a read would skip its file with nobody
   * sending it. So this run's own row must be seen before it decides; it
   * waits for it, polling, up to LIMITS.ledgerClaimWaitMs, then fails the
   * file rather than guess.
   */
  async claim(input: { sha256: string; name: string; bytes: number }): Promise<boolean> {
    const deadline = Date.now() + LIMITS.ledgerClaimWaitMs;
    for (;;) {
      const runs = (await this.ch.exec(`${runsOf(this.table, input.sha256)} ORDER BY started, run LIMIT ${LIMITS.ledgerRunsReadMax} ` +
        'FORMAT TabSeparated')).split('\n').filter((l) => l !== '').map((l) => l.split('\t')[3]);
      const mine = runs.indexOf(this.run);
      if (mine === 0) return true;
      if (mine > 0) break;
      if (Date.now() > deadline) {
        throw new ClickHouseError(`${input.name}: the input ledger still does not show this run's start after ` +
          `${LIMITS.ledgerClaimWaitMs} ms (replicas that far behind?); nothing of it was sent`);
      }
      await new Promise((r) => setTimeout(r, LIMITS.ledgerClaimPollMs));
    }
    await this.write(input, WITHDRAWN);
    return false;
  }

  started(input: { sha256: string; name: string; bytes: number }): Promise<void> {
    return this.write(input, STARTED);
  }

  done(input: { sha256: string; name: string; bytes: number }): Promise<void> {
    return this.write(input, DONE);
  }

  private async write(input: { sha256: string; name: string; bytes: number }, state: number): Promise<void> {
    await this.ch.exec(`INSERT INTO ${this.table} (sha256, run, state, name, bytes, at) VALUES (${sqlString(input.sha256)}, ` +
      `${sqlString(this.run)}, ${state}, ${sqlString(input.name)}, ${input.bytes}, ${Date.now()})`, undefined,
    this.distributed ? { insert_distributed_sync: '1' } : {});
  }
}
