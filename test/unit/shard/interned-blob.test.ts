// The byte-level pieces the shard writer uses instead of strings must agree
// with the string functions they replace: InternedBlob with a Map, and
// reverseNameBytes (dns/name.ts) with reverseName, on ordinary names and on odd ones.

import { describe, expect, it } from 'vitest';
import { reverseName, reverseNameBytes } from '../../../src/dns/name.js';
import { Prng } from '../../../src/demo/prng.js';
import { InternedBlob } from '../../../src/shard/interned-blob.js';
import { reversedNames } from '../../../src/shard/writer/blobs.js';

describe('InternedBlob', () => {
  it('gives each (text, tag) one id, as a Map would, and keeps the records as a blob', () => {
    const blob = new InternedBlob();
    const ids = new Map<string, number>();
    const rng = new Prng(3);
    for (let k = 0; k < 50_000; k++) {
      const text = `n${rng.below(5_000)}.example.`;
      const tag = rng.below(3);
      const key = `${tag} ${text}`;
      const id = k % 2 === 0 ? blob.intern(text, tag) : blob.internBytes(Buffer.from(`x${text}y`, 'latin1'), 1, text.length + 1, tag);
      if (!ids.has(key)) ids.set(key, ids.size);
      expect(id).toBe(ids.get(key));
    }
    expect(blob.length).toBe(ids.size);
    const { bytes, offsets } = blob.view();
    for (const [key, id] of ids) {
      const text = key.slice(key.indexOf(' ') + 1);
      expect(blob.text(id)).toBe(text);
      expect(Buffer.from(bytes.subarray(offsets[id], offsets[id + 1])).toString('latin1')).toBe(`${text}\n`);
      expect(blob.tag(id)).toBe(Number(key.slice(0, key.indexOf(' '))));
    }
  });

  it('appends records it is told are new, as one blob, and refuses lookups after', () => {
    const blob = new InternedBlob();
    const names = Array.from({ length: 3_000 }, (_, i) => `n${String(i).padStart(5, '0')}.example.`);
    names.forEach((n, i) => expect(blob.appendBytes(Buffer.from(`<${n}>`, 'latin1'), 1, n.length + 1, i % 2)).toBe(i));
    expect(blob.length).toBe(names.length);
    expect(Buffer.from(blob.view().bytes).toString('latin1')).toBe(names.map((n) => `${n}\n`).join(''));
    expect(blob.tag(1)).toBe(1);
    expect(() => blob.intern(names[0]!, 0)).toThrow('append-only');
    expect(() => blob.appendBytes(Buffer.from('a\tb.', 'latin1'), 0, 4, 0)).toThrow('record not printable ASCII');
  });

  it('refuses a record that is not printable ASCII', () => {
    const blob = new InternedBlob();
    expect(() => blob.intern('a\nb.', 0)).toThrow('record not printable ASCII');
    expect(() => blob.intern('caf\u00e9.', 0)).toThrow('record not printable ASCII');
    expect(blob.intern('', 0)).toBe(0);
  });
});

describe('reverseNameBytes', () => {
  it('reverses labels exactly as reverseName does, escapes and odd names included', () => {
    const fixed = ['', '.', 'a', 'a.', 'www.example.com.', 'a\\.b.c.', 'a\\\\.b.', 'x\\.', 'x\\\\.', '..', '...', '.a', 'a..b',
      '\\046.x.', 'a\\', 'a\\065b.c', '*.example.'];
    const rng = new Prng(5);
    const alphabet = 'ab.\\-0';
    const random = Array.from({ length: 20_000 },
      () => Array.from({ length: rng.below(12) }, () => alphabet[rng.below(alphabet.length)]).join(''));
    for (const name of [...fixed, ...random]) {
      const src = Buffer.from(name, 'latin1');
      const out = Buffer.alloc(name.length + 2);
      const end = reverseNameBytes(src, 0, src.length, out, 0);
      expect(out.toString('latin1', 0, end), JSON.stringify(name)).toBe(reverseName(name));
    }
    const blob = new InternedBlob();
    for (const name of fixed) blob.intern(name, 0);
    const rev = reversedNames(blob.view());
    expect(rev.bytes.toString('latin1')).toBe(fixed.map((n) => `${reverseName(n)}\n`).join(''));
  });
});
