// The ClickHouse data backend: the same SearchBackend seam as the local
// shards (search/backend.ts), answering from the tables of
// `rrscan clickhouse init` (clickhouse/schema.md). A search is one SELECT
// whose rows come back in the order the local backend's merge produces, so
// the paginator, the result lines and the SAF writer are shared.
//
// Every RRset comes aggregated over all data, so `aggr=false` answers as
// the local tier does once its shards are compacted into one (for rdata
// lookups: each RRset holding the record, lookup-sql.ts).

import { ClickHouse } from '../../clickhouse/client.js';
import { findTables, type Tables } from '../../clickhouse/schema.js';
import { LIMITS } from '../../config/limits.js';
import { ApiError, STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { FlexQuery } from '../../query/flex-query.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import type { Effective } from '../../query/params.js';
import type { FlexPlan, LookupPlan, SearchBackend } from '../backend.js';
import { compileFlex } from '../local/flex-plan.js';
import { flexSql } from './flex-sql.js';
import { lookupShape, type LookupShape } from './lookup-sql.js';
import { SelectLookupSource } from './lookup-source.js';
import { SelectFlexSource } from './select-source.js';

export interface ClickHouseBackendOptions {
  url: string;
  database: string;
  /** A SELECT's max_execution_time; serve passes its search timeout so ClickHouse stops when the answer has. */
  querySeconds?: number;
}


export class ClickHouseBackend implements SearchBackend {
  private inFlight = 0;
  private readonly querySeconds: number;

  private constructor(private readonly opts: ClickHouseBackendOptions, private readonly ch: ClickHouse,
    private readonly tables: Tables) {
    this.querySeconds = opts.querySeconds ?? LIMITS.clickhouseQuerySecondsMax;
  }

  /** Connects and finds the tables (a cluster's Distributed ones when init made them); fails when there are none. */
  static async open(opts: ClickHouseBackendOptions): Promise<ClickHouseBackend> {
    const ch = new ClickHouse(opts.url);
    try {
      return new ClickHouseBackend(opts, ch, await findTables(ch, opts.database));
    } catch (err) {
      ch.close();
      throw err;
    }
  }

  /** Counts a query in flight until the returned function is called (once; later calls do nothing). */
  private admit(): () => void {
    if (this.inFlight >= LIMITS.clickhouseQueriesInFlightMax) throw new ApiError('OVERLOADED');
    this.inFlight++;
    let held = true;
    return () => {
      if (held) this.inFlight--;
      held = false;
    };
  }

  planFlex(q: FlexQuery, eff: Effective): FlexPlan {
    const patterns = compileFlex(q);
    const release = this.admit();
    return {
      error: patterns.error,
      open: (events) => {
        const source = new SelectFlexSource(q.target, events);
        let sql: string;
        try {
          sql = flexSql(q, eff.fence, eff.offset + eff.limit + 1, this.tables);
        } catch (err) {
          // A pattern whose compiled form is over the literal bound (literal.ts).
          release();
          events.fail(STREAM_MESSAGES.INTERNAL, err);
          return { sources: [], close: () => undefined };
        }
        source.start(this.ch, sql, this.querySeconds, release);
        return {
          sources: [source],
          close: () => {
            source.close();
            release();
          },
        };
      },
      cancel: release,
    };
  }

  planLookup(q: LookupQuery, eff: Effective): LookupPlan {
    const release = this.admit();
    return {
      open: (events) => {
        let shape: LookupShape;
        try {
          shape = lookupShape(q, eff.offset + eff.limit + 1, this.tables);
        } catch (err) {
          release();
          events.fail(STREAM_MESSAGES.INTERNAL, err);
          return { sources: [], close: () => undefined };
        }
        const source = new SelectLookupSource(shape, events);
        source.start(this.ch, this.querySeconds, release);
        return {
          sources: [source],
          close: () => {
            source.close();
            release();
          },
        };
      },
      cancel: release,
    };
  }

  describe(): Record<string, unknown> {
    return {
      backend: 'clickhouse', url: this.opts.url, database: this.opts.database, distributed: this.tables.distributed,
      querySeconds: this.querySeconds,
    };
  }

  close(): Promise<void> {
    this.ch.close();
    return Promise.resolve();
  }
}
