// `rrscan demo`: --rrsets counts RRsets, as every "records" elsewhere counts
// records; --records, its old name, still works and says it is deprecated.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, tempPaths } from '../helpers/rrscan.js';

const paths = tempPaths();
afterAll(() => paths.removeAll());

const rrsetsIn = (dir: string): number =>
  (JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { rrsets: number }[] }).shards
    .reduce((n, s) => n + s.rrsets, 0);

describe('rrscan demo', () => {
  it('--rrsets N generates N RRsets', () => {
    const dir = paths.fresh();
    const r = cli(['demo', '--data', dir, '--rrsets', '300']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(rrsetsIn(dir)).toBe(300);
  });

  it('--records N, the old name, does the same and says it is deprecated', () => {
    const dir = paths.fresh();
    const r = cli(['demo', '--data', dir, '--records', '300']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('rrscan demo: --records is deprecated and will go; it is --rrsets now (it counts RRsets)\n');
    expect(rrsetsIn(dir)).toBe(300);
  });
});
