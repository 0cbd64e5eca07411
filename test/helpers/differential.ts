// Test harness for the differential tests of the two data tiers
// (clickhouse-differential, clickhouse-cluster, clickhouse-replicas): the
// same NDJSON files go into local shards and into ClickHouse, and two
// `rrscan serve`s must answer the same requests byte for byte.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cliOk, get, withoutKeepAlives, type Server } from './rrscan.js';

/** Requests in flight at once per comparison: enough to keep both servers busy on two cores. */
const IN_PARALLEL = 8;

/**
 * Writes each list of objects as an NDJSON file beside `dir` (not in it:
 * `dir` is a data directory) and answers their paths, for the test to
 * ingest and then delete.
 */
export function ndjsonFilesBeside(dir: string, lists: readonly (readonly object[])[]): string[] {
  return lists.map((objs, i) => {
    const file = path.join(dir, '..', `${path.basename(dir)}-${i}.ndjson`);
    writeFileSync(file, objs.map((o) => JSON.stringify(o)).join('\n') + '\n');
    return file;
  });
}

/**
 * Ingests `file` into the data directory and into ClickHouse at `url`; fails
 * when either tier skipped it (its input ledger took it for ingested), which
 * would leave the two tiers with different data and the comparison meaningless.
 */
export function ingestBoth(dir: string, url: string, file: string, extra: readonly string[] = []): void {
  for (const target of [['--data', dir], ['--clickhouse-url', url]]) {
    const out = cliOk(['ingest', ...target, ...extra, file]);
    if (/skipped/.test(out)) throw new Error(`rrscan ingest ${target.join(' ')} ${file} skipped it: ${out}`);
  }
}

export interface Difference {
  path: string;
  /** Status, content type and body from each server. */
  want: string;
  got: string;
}

/**
 * Asks `want` and `got` for each path (under /pdns/v2/) and answers the
 * paths whose status, content type or body (keep-alive lines aside) differ;
 * logs both servers' average time per search.
 */
export async function differences(want: Server, got: Server, paths: readonly string[],
  headers: Record<string, string>): Promise<Difference[]> {
  const out: Difference[] = [];
  const timing = { want: 0, got: 0 };
  for (let i = 0; i < paths.length; i += IN_PARALLEL) {
    await Promise.all(paths.slice(i, i + IN_PARALLEL).map(async (p) => {
      const t0 = performance.now();
      const a = await get(want, `/pdns/v2/${p}`, headers);
      const t1 = performance.now();
      const b = await get(got, `/pdns/v2/${p}`, headers);
      timing.want += t1 - t0;
      timing.got += performance.now() - t1;
      // Keep-alives come wherever a tier took long (ClickHouse often does, a loaded machine too), so they are not compared.
      const show = (r: typeof a) => `${r.status} ${r.headers['content-type']}\n${withoutKeepAlives(r.body).body}`;
      if (show(a) !== show(b)) out.push({ path: p, want: show(a), got: show(b) });
    }));
  }
  console.log(`${paths.length} searches: ${(timing.want / paths.length).toFixed(1)} ms against ` +
    `${(timing.got / paths.length).toFixed(1)} ms on average`);
  return out;
}
