// The one place a data tier is chosen: `rrscan serve` turns its flags into
// a BackendConfig, and the server opens whatever it names through
// openBackend without knowing any tier. A third tier adds its folder under
// search/, its case here and its flags to `rrscan serve`; no server code.
//
// This module sits in search/ itself, not in a tier's folder, so the rule
// that keeps sibling tiers apart (search-tiers-never-import-each-other in
// .dependency-cruiser.cjs) lets it import every tier.

import type { SearchBackend } from './backend.js';
import { ClickHouseBackend, type ClickHouseBackendOptions } from './clickhouse/clickhouse-backend.js';
import { LocalBackend, type LocalBackendOptions } from './local/local-backend.js';

/** A data tier and its options, by `kind`. */
export type BackendConfig =
  | ({ kind: 'local' } & LocalBackendOptions)
  | ({ kind: 'clickhouse' } & ClickHouseBackendOptions);

/**
 * Opens the tier `config` names: the local shards are loaded (a corrupt one
 * quarantined, not fatal) and their scan threads started; ClickHouse is
 * connected to and its tables found, or this rejects.
 */
export function openBackend(config: BackendConfig): Promise<SearchBackend> {
  switch (config.kind) {
    case 'local': return Promise.resolve(new LocalBackend(config));
    case 'clickhouse': return ClickHouseBackend.open(config);
  }
}
