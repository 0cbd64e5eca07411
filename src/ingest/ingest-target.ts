// Where an ingest run's input files go: the shards of a data directory
// (run.ts: published in one manifest swap, or nothing) or the tables of
// ClickHouse (clickhouse-ingest.ts: batch by batch). `rrscan ingest` builds
// an IngestTargetConfig from its flags and runs the files through the one
// IngestTarget it names; another place to write adds its case here and its
// flags to the command, and the command's path through a run stays as it is.

import { ingestFilesToClickHouse } from './clickhouse-ingest.js';
import { ingestFiles, type FileRunOptions, type IngestSummary } from './run.js';

/** A target and its options, by `kind`. */
export type IngestTargetConfig =
  | { kind: 'local'; dataDir: string; memoryRrsets?: number; threads?: number }
  | { kind: 'clickhouse'; url: string; database: string };

export interface IngestTarget {
  ingest(files: readonly string[], run: FileRunOptions): Promise<IngestSummary>;
  /** Where the summary line says the RRsets went. */
  where(s: IngestSummary): string;
  /** What a run that failed leaves behind, for its one line. */
  readonly afterFailure: string;
}

export function ingestTarget(config: IngestTargetConfig): IngestTarget {
  switch (config.kind) {
    case 'local': {
      const { kind: _, ...shards } = config;
      return {
        ingest: (files, run) => ingestFiles(files, { ...run, ...shards }),
        where: (s) => `written in ${s.shards.length} shard(s)`,
        // ingestFiles deletes what the run wrote.
        afterFailure: 'nothing was published',
      };
    }
    case 'clickhouse': {
      const { url, database } = config;
      return {
        ingest: (files, run) => ingestFilesToClickHouse(files, { ...run, url, database }),
        where: () => `sent to ClickHouse database ${database}`,
        // ClickHouse takes batch by batch: the line says what stays and how the ledger guards it.
        afterFailure: 'batches sent before the failure stay in ClickHouse (the next run refuses a file left unfinished, until --again)',
      };
    }
  }
}
