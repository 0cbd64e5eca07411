// Runs a suite against each data backend behind `rrscan serve`: the local
// shards, and ClickHouse (a private clickhouse-server, skipped with the
// reason printed when Debian's binary is missing). The suite ingests and
// starts servers through the backend it is given, so one set of assertions
// (exact bodies) holds both tiers to the same answers.
//
// On ClickHouse every data directory gets its own database (made by
// `rrscan clickhouse init` at its first ingest or serve); the directory
// still holds the keys.

import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseServer } from './clickhouse-server.js';
import { cliOk, ingestNdjson, startServer, type Server } from './rrscan.js';

export interface BackendUnderTest {
  readonly name: 'local shards' | 'ClickHouse';
  /** Writes NDJSON lines to a file and ingests it into `dataDir`'s data; throws with the CLI's output on failure. */
  ingestNdjson(dataDir: string, objects: object[], name?: string): void;
  /** Ingests files (any format ingest reads) into `dataDir`'s data. */
  ingestFiles(dataDir: string, files: string[]): void;
  /** `rrscan serve` answering from `dataDir`'s data (keys are always `dataDir`'s). */
  startServer(dataDir: string, extra?: string[], env?: Record<string, string>): Promise<Server>;
}

const local: BackendUnderTest = {
  name: 'local shards',
  ingestNdjson: (dataDir, objects, name) => void ingestNdjson(dataDir, objects, name),
  ingestFiles: (dataDir, files) => void cliOk(['ingest', '--data', dataDir, ...files]),
  startServer: (dataDir, extra = [], env = {}) => startServer(dataDir, extra, env),
};

function clickhouse(server: () => ClickHouseServer): BackendUnderTest {
  const initialised = new Set<string>();
  /** The database of `dataDir`, created at first use. */
  const database = (dataDir: string): string => {
    const db = `t_${path.basename(dataDir).replace(/[^A-Za-z0-9_]/g, '_')}`;
    if (!initialised.has(db)) {
      cliOk(['clickhouse', 'init', '--url', server().url, '--database', db]);
      initialised.add(db);
    }
    return db;
  };
  const target = (dataDir: string): string[] => ['--clickhouse-url', server().url, '--clickhouse-database', database(dataDir)];
  const ingestFiles = (dataDir: string, files: string[]): void => void cliOk(['ingest', ...target(dataDir), ...files]);
  return {
    name: 'ClickHouse',
    ingestNdjson: (dataDir, objects, name = 'fixture.ndjson') => {
      const file = path.join(dataDir, '..', `${path.basename(dataDir)}-${name}`);
      writeFileSync(file, objects.map((o) => JSON.stringify(o)).join('\n') + '\n');
      try {
        ingestFiles(dataDir, [file]);
      } finally {
        rmSync(file, { force: true });
      }
    },
    ingestFiles,
    startServer: (dataDir, extra = [], env = {}) => startServer(dataDir, [...target(dataDir), ...extra], env),
  };
}

/** `body` once per backend, in a describe named `title (backend)`. */
export function describeEachBackend(title: string, body: (backend: BackendUnderTest) => void): void {
  describe(`${title} (local shards)`, () => body(local));
  if (!HAVE_CLICKHOUSE) console.warn(`${title} (ClickHouse): ${CLICKHOUSE_SKIP_REASON}`);
  describe.skipIf(!HAVE_CLICKHOUSE)(`${title} (ClickHouse)`, () => {
    let server: ClickHouseServer | undefined;
    beforeAll(async () => {
      server = await startClickHouse();
    });
    afterAll(async () => {
      await server?.close();
    });
    body(clickhouse(() => server!));
  });
}
