// The blob scan loop: hits in order, ranges, early stop, cancellation and
// resumption, chunk boundaries (blobs larger than LIMITS.scanChunkBytes),
// SharedArrayBuffer blobs, and agreement with the per-record reference.

import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../../../src/config/limits.js';
import { compilePattern } from '../../../../src/query/pattern.js';
import { everyRecord, makeMatcher, recordMatches, scanRecords } from '../../../../src/search/local/blob-searcher.js';
import type { BlobColumns } from '../../../../src/shard/blob.js';
import { makeView } from '../../../helpers/blob-view.js';


const matcher = (pattern: string) => makeMatcher(compilePattern('regex', pattern));

function scanAll(re: RE2, view: BlobColumns, from = 0, to = view.offsets.length - 1): number[] {
  const hits: number[] = [];
  expect(scanRecords(re, view, from, to, (i) => { hits.push(i); return true; }, () => false)).toBe(to);
  return hits;
}

function reference(pattern: string, records: readonly string[], from = 0, to = records.length): number[] {
  const re = new RE2('(?i)' + pattern);
  const out: number[] = [];
  for (let i = from; i < to; i++) if (re.test(Buffer.from(records[i]!, 'latin1'))) out.push(i);
  return out;
}

const SMALL = ['', 'a.example.', 'b.example.', '', 'mail.b.example.', 'x', 'WWW.A.EXAMPLE.', 'zz.', ''];

describe('scanRecords', () => {
  test('reports matching records in order, empty records included', () => {
    const view = makeView(SMALL);
    expect(scanAll(matcher('example'), view)).toEqual([1, 2, 4, 6]);
    expect(scanAll(matcher('^$'), view)).toEqual([0, 3, 8]);
    expect(scanAll(matcher('$'), view)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(scanAll(matcher('^a\\.'), view)).toEqual([1]);
    expect(scanAll(matcher('\\.$'), view)).toEqual([1, 2, 4, 6, 7]);
    expect(scanAll(matcher('nothing'), view)).toEqual([]);
  });

  test('scans only [from, to)', () => {
    const view = makeView(SMALL);
    expect(scanAll(matcher('example'), view, 2, 5)).toEqual([2, 4]);
    expect(scanAll(matcher('^$'), view, 1, 3)).toEqual([]);
    expect(scanAll(matcher('^$'), view, 3, 4)).toEqual([3]);
    expect(scanAll(matcher('.'), view, 4, 4)).toEqual([]);
    expect(() => scanRecords(matcher('a'), view, 5, 4, () => true, () => false)).toThrow(/record range/);
    expect(() => scanRecords(matcher('a'), view, 0, 10, () => true, () => false)).toThrow(/record range/);
  });

  test('stops when onRecord returns false and returns the next record to scan', () => {
    const view = makeView(SMALL);
    const re = matcher('example');
    const seen: number[] = [];
    const next = scanRecords(re, view, 0, SMALL.length, (i) => { seen.push(i); return seen.length < 2; }, () => false);
    expect(seen).toEqual([1, 2]);
    expect(next).toBe(3);
    expect(scanAll(re, view, next)).toEqual([4, 6]);
  });

  test('a scan that is always asked to stop still makes progress and, resumed, finds the same records', () => {
    const records = Array.from({ length: 30_000 }, (_, i) => `host${i}.${i % 3 === 0 ? 'paypal' : 'example'}.com.`);
    const view = makeView(records);
    const re = matcher('paypal');
    const hits: number[] = [];
    let at = 0;
    let calls = 0;
    while (at < records.length) {
      const next = scanRecords(re, view, at, records.length, (i) => { hits.push(i); return true; }, () => true);
      expect(next).toBeGreaterThan(at);
      at = next;
      calls++;
    }
    expect(hits).toEqual(reference('paypal', records));
    // 10,000 hits, asked to stop every 256 hits.
    expect(calls).toBe(Math.ceil(10_000 / 256));
  });

  test('blobs larger than scanChunkBytes: chunk edges lose and duplicate nothing', () => {
    const records: string[] = [];
    let bytes = 0;
    for (let i = 0; bytes < 2.5 * LIMITS.scanChunkBytes; i++) {
      const r = i % 7 === 0 ? '' : `n${i}${i % 5 === 0 ? '-login' : ''}.${'x'.repeat(i % 50)}.example.`;
      records.push(r);
      bytes += r.length + 1;
    }
    const view = makeView(records);
    for (const pattern of ['-login\\.', '^$', '$', '^n\\d*5\\.', 'x{49}', '[^x]*\\z']) {
      expect({ pattern, hits: scanAll(matcher(pattern), view) }).toEqual({ pattern, hits: reference(pattern, records) });
    }
    // Stopping at every chunk edge: the resume index is a record boundary near each 1 MiB step.
    const stops: number[] = [];
    let at = 0;
    while (at < records.length) {
      at = scanRecords(matcher('nothing'), view, at, records.length, () => true, () => true);
      stops.push(at);
    }
    expect(stops.length).toBe(3);
    expect(view.offsets[stops[0]!]! - 0).toBeGreaterThanOrEqual(LIMITS.scanChunkBytes);
    expect(view.offsets[stops[0]! - 1]!).toBeLessThan(LIMITS.scanChunkBytes);
  });

  test('a blob over a SharedArrayBuffer is read in place', () => {
    const view = makeView(SMALL, true);
    expect(view.blob.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(scanAll(matcher('example'), view)).toEqual([1, 2, 4, 6]);
    expect(recordMatches(matcher('^zz\\.$'), view, 7)).toBe(true);
  });
});

describe('recordMatches and makeMatcher', () => {
  test('tests one record, without its newline', () => {
    const view = makeView(SMALL);
    const re = matcher('^$');
    expect(SMALL.map((_, i) => recordMatches(re, view, i))).toEqual([true, false, false, true, false, false, false, false, true]);
    const www = matcher('www\\.a\\.example\\.$');
    expect(recordMatches(www, view, 6)).toBe(true);
    expect(recordMatches(matcher('\\n'), view, 6)).toBe(false);
  });

  test('matchers are neither global nor sticky', () => {
    const p = compilePattern('regex', 'a');
    expect(makeMatcher(p).global).toBe(false);
    expect(() => makeMatcher({ ...p, blobFlags: 'g' })).toThrow(/neither global nor sticky/);
  });
});

describe('patterns that match every record', () => {
  // Shard records are never empty (a name is at least ".", a value at least
  // `""`) and never hold a newline: on such records these match everything,
  // which is what lets the scan skip RE2 for them.
  const records = ['.', 'a', 'example.com.', '"v=spf1 -all"', '10.0.0.1', 'x'.repeat(300), ' '];
  const every = ['.', '.*', '.+', '^', '$', '^.', '^.*', '^.+', '.$', '.*$', '.+$', '^.*$', '^.+$'];

  test('compilePattern marks exactly these (and the glob `*`), and RE2 agrees on every record', () => {
    for (const p of every) {
      expect({ p, every: compilePattern('regex', p).everyRecord }).toEqual({ p, every: true });
      expect({ p, hits: reference(p, records) }).toEqual({ p, hits: records.map((_, i) => i) });
    }
    expect(compilePattern('glob', '*').everyRecord).toBe(true);
    for (const p of ['^$', '^.$', 'a', '.{2}', '(?s).', '\\.', '^.*a$']) {
      expect({ p, every: compilePattern('regex', p).everyRecord }).toEqual({ p, every: false });
    }
  });

  test('everyRecord visits [from, to) in order, stops when told, and resumes where it stopped', () => {
    const seen: number[] = [];
    expect(everyRecord(2, 9, (i) => { seen.push(i); return i < 5; }, () => false)).toBe(6);
    expect(seen).toEqual([2, 3, 4, 5]);
    let checks = 0;
    const n = 3 * 256 + 10;
    expect(everyRecord(0, n, () => true, () => ++checks === 2)).toBe(512);
    expect(everyRecord(512, n, () => true, () => false)).toBe(n);
  });
});
