// The table of worker entry points (lib/workers.ts) and the pools made from
// it (lib/threads.ts): every row has its file, every file its row, and a
// call is typed by the row: a wrong task or an unknown name does not compile
// (tsc -p tsconfig.test.json, part of `npm run lint`, checks the two lines
// that expect an error).

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/config/paths.js';
import { runOnThreads, workerFile, workerPool } from '../../../src/lib/threads.js';
import { EVERY_ROW_NAMED, WORKER_NAMES, type WorkerResult } from '../../../src/lib/workers.js';

describe('worker entry points', () => {
  it('are exactly the files of workers/, each compiled where the pools load it', () => {
    const files = readdirSync(path.join(PACKAGE_ROOT, 'workers')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
    expect([...WORKER_NAMES].sort()).toEqual(files.sort());
    expect(EVERY_ROW_NAMED).toBe(true);
    for (const name of WORKER_NAMES) expect(existsSync(workerFile(name)), `${workerFile(name)} (npm run build)`).toBe(true);
  });

  it('a pool made by name runs the row\'s task and resolves to its result, without a cast', async () => {
    const pool = workerPool('scrub', { minThreads: 0, maxThreads: 1, maxQueue: 1, concurrentTasksPerWorker: 1 });
    try {
      const result: WorkerResult<'scrub'> = await pool.run({ file: '/nonexistent/rrscan.rrs', identity: '0:0', bytesPerSecond: 0 });
      expect(result.outcome).toBe('replaced');
    } finally {
      await pool.destroy();
    }
  });

  it('refuses, at compile time, a name with no row and a task of another row', () => {
    // @ts-expect-error: no entry point is named 'scrubber'
    expect(() => workerFile('scrubber')).not.toThrow();
    const wrongTask = () => runOnThreads('compact', [
      // @ts-expect-error: a scrub task is not a compaction range
      { file: 'x.rrs', identity: '0:0', bytesPerSecond: 0 },
    ]);
    expect(typeof wrongTask).toBe('function');
  });
});
