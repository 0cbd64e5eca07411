// The standing watches' series that mean the same on every tier (the open
// watches and their distinct patterns: WatchHubStats), registered by each
// tier's registerMetrics (backend.ts) beside whatever its own feed counts.
// One copy of their names and help texts, so both tiers say the same.

import type { Registry } from 'prom-client';
import { gauge, one } from '../lib/prometheus.js';
import type { WatchHubStats } from './watch-hub.js';

/** `stats` is undefined until the first watch opens (a tier makes its feed then): the series read 0. */
export function watchHubMetrics(registry: Registry, stats: () => WatchHubStats | undefined): void {
  const hub = (): WatchHubStats => stats() ?? { open: 0, rrnames: 0, rdata: 0 };
  gauge(registry, 'rrscan_watches_open', 'Standing watches open now', [], () => one(hub().open));
  gauge(registry, 'rrscan_watch_patterns', 'Distinct patterns of the open standing watches, by target', ['target'], () => {
    const h = hub();
    return [[{ target: 'rrnames' }, h.rrnames], [{ target: 'rdata' }, h.rdata]];
  });
}
