// The port of the re2 binding's pattern translation: for every sample the
// binding itself accepts, the same text RE2 receives from it (internalSource),
// and a map from each output character back to the user's pattern.

import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { translateLikeBinding } from '../../../src/query/binding-translation.js';

describe('translateLikeBinding', () => {
  // Everything the binding rewrites, except \p{LongName} expansion (left to the binding).
  const samples = ['abc', 'a/b', '\\/', '(?<n>x)', '(?<=x)', '(?<!x)', '\\cA', '\\cz', '\\c', '\\u0041', '\\u00e9x', '\\u{41}',
    '\\uZ', '\\u', '\\Q/(?<a\\E', '[(?<x]', '\\\\/', '\\p{Greek}', '\\pL', '\\x{41}', '\\', 'a\\', '[a/]', '\\é'];
  test.each(samples)('%j matches the binding', (p) => {
    let internal: string | undefined;
    try { internal = new RE2(p).internalSource; } catch { internal = undefined; }
    if (internal !== undefined) expect(translateLikeBinding(p).text).toBe(internal);
  });

  test('origin maps each output character back to the user pattern', () => {
    const t = translateLikeBinding('a/\\u0041(?<n>b)');
    expect(t.text).toBe('a\\/\\x{0041}(?P<n>b)');
    expect(Array.from(t.origin)).toEqual([0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 8, 8, 8, 8, 11, 12, 13, 14, 15]);
  });
});
