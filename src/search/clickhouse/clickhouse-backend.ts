// The ClickHouse data backend: the same SearchBackend seam as the local
// shards (search/backend.ts), answering from the tables of
// `rrscan clickhouse init` (clickhouse/schema.md). A search is one SELECT
// whose rows come back in the order the local backend's merge produces, so
// the paginator, the result lines and the SAF writer are shared.
//
// Every RRset comes aggregated over all data, so `aggr=false` answers as
// the local tier does once its shards are compacted into one (for rdata
// lookups: each RRset holding the record, lookup-sql.ts).

import type { Registry } from 'prom-client';
import { ClickHouse } from '../../clickhouse/client.js';
import type { Tables } from '../../clickhouse/schema.js';
import { findTables } from '../../clickhouse/tables.js';
import { LIMITS } from '../../config/limits.js';
import { ApiError, STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { FlexQuery } from '../../query/flex-query.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import type { Effective } from '../../query/params.js';
import type { BackendDescription, FlexPlan, LookupPlan, SearchBackend } from '../backend.js';
import type { OpenSources, SourceEvents } from '../sources.js';
import { compileFlex } from '../flex-patterns.js';
import { flexSql } from './flex-sql.js';
import { lookupShape } from './lookup-sql.js';
import { SelectLookupSource } from './lookup-source.js';
import { SelectFlexSource } from './select-source.js';
import type { StreamedSelect } from './streamed-select.js';
import type { WatchQuery } from '../../query/watch-query.js';
import type { WatchPlan } from '../watch-stream.js';
import { watchHubMetrics } from '../watch-metrics.js';
import { ClickHouseWatchFeed } from './clickhouse-watch-feed.js';

export interface ClickHouseBackendOptions {
  url: string;
  database: string;
  /** A SELECT's max_execution_time; serve passes its search timeout so ClickHouse stops when the answer has. */
  querySeconds?: number;
}


export class ClickHouseBackend implements SearchBackend {
  private inFlight = 0;
  private readonly querySeconds: number;
  /** Standing watches: made with the first one, polling while any is open. */
  private watchFeed: ClickHouseWatchFeed | undefined;

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
      // flexSql throws for a pattern whose compiled form is over the literal bound (literal.ts).
      open: (events) => this.openOne(events, release,
        () => new SelectFlexSource(q.target, flexSql(q, eff.fence, eff.offset + eff.limit + 1, this.tables), events)),
      cancel: release,
    };
  }

  planLookup(q: LookupQuery, eff: Effective): LookupPlan {
    const release = this.admit();
    return {
      open: (events) => this.openOne(events, release,
        () => new SelectLookupSource(lookupShape(q, eff.offset + eff.limit + 1, this.tables), events)),
      cancel: release,
    };
  }

  /**
   * A search's one source: `make` builds it (its SQL), and it starts now,
   * giving its query slot back (`release`) when it ends or is closed. SQL
   * that cannot be built fails the search in-stream and frees the slot.
   */
  private openOne<S extends StreamedSelect>(events: SourceEvents, release: () => void, make: () => S): OpenSources<S> {
    let source: S;
    try {
      source = make();
    } catch (err) {
      release();
      events.fail(STREAM_MESSAGES.INTERNAL, err);
      return { sources: [], close: () => undefined };
    }
    source.start(this.ch, this.querySeconds, release);
    return {
      sources: [source],
      close: () => {
        source.close();
        release();
      },
    };
  }

  planWatch(q: WatchQuery, eff: Effective): WatchPlan {
    this.watchFeed ??= new ClickHouseWatchFeed(this.ch, this.tables, this.querySeconds);
    return this.watchFeed.plan(q, eff);
  }

  describe(): BackendDescription {
    return {
      message: 'data backend ready',
      fields: {
        backend: 'clickhouse', url: this.opts.url, database: this.opts.database, distributed: this.tables.distributed,
        ngramIndex: this.tables.ngramIndex, querySeconds: this.querySeconds,
      },
    };
  }

  /**
   * Asks every shard for nothing through the primary key (an empty name
   * is never stored): a node or a shard down makes the server not ready.
   */
  async notReady(): Promise<string | undefined> {
    try {
      await this.ch.exec(`SELECT count() FROM ${this.tables.rrsets} WHERE rrname_rev = '' FORMAT TabSeparated`);
      return undefined;
    } catch (err) {
      // /readyz is the operator's port: the cause (which node, which error) is what they need.
      return `ClickHouse unreachable: ${(err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim().slice(0, 400)}`;
    }
  }

  /**
   * The standing watches' series both tiers share; what only this tier's
   * feed counts (polls, rows read, tuples remembered) is not exported.
   */
  registerMetrics(registry: Registry): void {
    watchHubMetrics(registry, () => this.watchFeed?.stats());
  }

  close(): Promise<void> {
    this.watchFeed?.close();
    this.ch.close();
    return Promise.resolve();
  }
}
