// Prometheus metrics read at scrape time (prom-client): a counter or gauge
// whose collect() reads the totals a part keeps for itself as plain numbers,
// so nothing but a scrape ever touches prom-client. Shared by the server's
// registry (server/metrics.ts, with the series its data tier adds:
// search/local/local-metrics.ts, search/watch-metrics.ts), the
// supervisor's of --processes N (server/process-group.ts) and the live
// receiver's (ingest/live/live-metrics.ts).

import { Counter, Gauge, type Aggregator, type Registry } from 'prom-client';

export type Labels = Record<string, string>;
/** A metric's values: each with its labels. */
export type Series = readonly (readonly [Labels, number])[];

/** A counter that reads its values at scrape time. */
export function counter(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Series): void {
  new Counter({
    name, help, labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of read()) this.inc(labels, v);
    },
  });
}

/**
 * A gauge that reads its values at scrape time. `aggregator`: how the
 * supervisor of --processes N combines its members' values (process-group.ts):
 * summed, unless every member sees the same thing (the shards) or the
 * freshest one counts.
 */
export function gauge(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Series,
  aggregator: Aggregator = 'sum'): void {
  new Gauge({
    name, help, labelNames, registers: [registry], aggregator,
    collect() {
      this.reset();
      for (const [labels, v] of read()) this.set(labels, v);
    },
  });
}

/** The one value of a metric without labels. */
export const one = (v: number): Series => [[{}, v]];
