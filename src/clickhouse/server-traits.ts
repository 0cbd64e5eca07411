// The server's traits, read by the DDL (schema.ts), table discovery
// (tables.ts) and init (schema-init.ts), so that what differs by ClickHouse
// release is decided in one place.

import type { ClickHouse } from './client.js';

/**
 * What a server offers beyond 18.16 that the schema or the searches use,
 * asked of the server itself: the one place that decides by version.
 */
export interface ServerTraits {
  version: string;
  /**
   * The MergeTree setting allow_dimensions_outside_sorting_key exists (26.7
   * on): without it set, such a server refuses an AggregatingMergeTree with a
   * plain column outside the sorting key. rrsets and rdata_index keep texts
   * beside their keys (rrname beside rrname_rev, rdata beside rdata_wire)
   * that depend on the key, which is what the setting declares.
   */
  dimensionsSetting: boolean;
  /**
   * Data-skipping indexes, without experimental flags: the server lists them
   * in system.data_skipping_indices (21.x on; 18.16 has none, 19.x-20.x
   * only behind a flag, and are taken as having none).
   */
  skipIndexes: boolean;
}

/** The server's traits: small reads of system tables that 18.16 has too. */
export async function serverTraits(ch: ClickHouse): Promise<ServerTraits> {
  const version = await ch.version();
  const has = async (sql: string) => (await ch.exec(`${sql} FORMAT TabSeparated`)).trim() !== '';
  return {
    version,
    dimensionsSetting: await has("SELECT name FROM system.merge_tree_settings WHERE name = 'allow_dimensions_outside_sorting_key'"),
    skipIndexes: await has("SELECT name FROM system.tables WHERE database = 'system' AND name = 'data_skipping_indices'"),
  };
}
