import { describe, expect, it } from 'vitest';
import { nameFromWire, nameToWire, normalizeName, reverseName } from '../../../src/dns/name.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

/** Catches the thrown error so tests can assert its code and message. */
function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected a throw');
}

describe('normalizeName', () => {
  it('lower-cases and adds the trailing dot', () => {
    expect(normalizeName('WWW.Example.COM')).toBe('www.example.com.');
    expect(normalizeName('www.example.com.')).toBe('www.example.com.');
    expect(normalizeName('com')).toBe('com.');
    expect(normalizeName('.')).toBe('.');
  });

  it('completes relative names with the origin; "@" is the origin', () => {
    expect(normalizeName('www', 'example.com.')).toBe('www.example.com.');
    expect(normalizeName('www', 'Example.COM')).toBe('www.example.com.');
    expect(normalizeName('@', 'example.com.')).toBe('example.com.');
    expect(normalizeName('@')).toBe('.');
    expect(normalizeName('a.b', '.')).toBe('a.b.');
    expect(normalizeName('ns1.other.', 'example.com.')).toBe('ns1.other.');
  });

  it('decodes \\X and \\DDD escapes and writes the canonical escapes', () => {
    expect(normalizeName('\\065bc.example.')).toBe('abc.example.');
    expect(normalizeName('a\\.b.example.')).toBe('a\\.b.example.');
    expect(normalizeName('a\\046b.example.')).toBe('a\\.b.example.');
    expect(normalizeName('sp\\ ace.example.')).toBe('sp\\032ace.example.');
    expect(normalizeName('x\\000\\255\\127.')).toBe('x\\000\\255\\127.');
    expect(normalizeName('q\\"\\;\\(\\)\\\\.')).toBe('q\\"\\;\\(\\)\\\\.');
    expect(normalizeName('a@b$c.')).toBe('a\\@b\\$c.');
    expect(normalizeName('\\m\\X.')).toBe('mx.');
    // Printable specials other than the master-file ones stay as they are.
    expect(normalizeName('_sip._tcp.*.a-b.')).toBe('_sip._tcp.*.a-b.');
  });

  it('encodes non-ASCII text as UTF-8 octets', () => {
    expect(normalizeName('bücher.de')).toBe('b\\195\\188cher.de.');
    expect(hex(nameToWire('bücher.de'))).toBe('0762C3BC6368657202646500');
  });

  it('gives only bytes 0x20-0x7E and never a space', () => {
    for (const base of [0, 128]) {
      // 128 octets as \DDD escapes, in labels of at most 60.
      const labels: string[] = [];
      for (let b = base; b < base + 128; b += 60) {
        let l = '';
        for (let k = b; k < Math.min(b + 60, base + 128); k++) l += `\\${String(k).padStart(3, '0')}`;
        labels.push(l);
      }
      const input = `${labels.join('.')}.`;
      const name = normalizeName(input);
      expect(name).toMatch(/^[\x21-\x7e]+$/);
      expect(nameToWire(name)).toEqual(nameToWire(input));
      expect(nameToWire(name).length).toBe(128 + labels.length + 1);
    }
  });

  it('accepts a 63-octet label and a 255-octet name, and no more', () => {
    const l63 = 'a'.repeat(63);
    expect(normalizeName(`${l63}.`)).toBe(`${l63}.`);
    expect(thrown(() => normalizeName(`${l63}a.`)).message).toMatch(/label longer than 63/);
    expect(thrown(() => normalizeName(`\\065${l63}.`)).message).toMatch(/label longer than 63/);
    // 4 labels of 63 plus a 1-octet label: 4*64 + 2 + 1 = 259 octets; 3*64 + 62 + 1 = 255.
    const n255 = `${l63}.${l63}.${l63}.${'b'.repeat(61)}.`;
    expect(nameToWire(n255).length).toBe(255);
    expect(normalizeName(n255)).toBe(n255);
    const e = thrown(() => normalizeName(`${l63}.${l63}.${l63}.${'b'.repeat(62)}.`));
    expect(e.code).toBe('DNS_FORMAT');
    expect(e.message).toMatch(/longer than 255/);
    expect(thrown(() => normalizeName('c', `${l63}.${l63}.${l63}.${'b'.repeat(61)}.`)).message).toMatch(/255/);
  });

  it('rejects empty labels, empty names and bad escapes with DnsFormatError', () => {
    for (const bad of ['', 'a..b.', '.a.', '..', 'a\\', 'a\\25', 'a\\2x5', 'a\\256.']) {
      const e = thrown(() => normalizeName(bad));
      expect(e.code, bad).toBe('DNS_FORMAT');
    }
  });
});

describe('nameToWire', () => {
  it('writes uncompressed lower-case wire', () => {
    expect(hex(nameToWire('WWW.Example.com.'))).toBe('03777777076578616D706C6503636F6D00');
    expect(hex(nameToWire('.'))).toBe('00');
    expect(hex(nameToWire('a\\.b.c'))).toBe('03612E620163' + '00');
  });
});

describe('nameFromWire', () => {
  it('reads a plain name and reports its end', () => {
    const msg = bytes('FF 03777777 076578616D706C65 03636F6D 00 EE');
    expect(nameFromWire(msg, 1)).toEqual({ name: 'www.example.com.', end: 18 });
    expect(nameFromWire(bytes('00'), 0)).toEqual({ name: '.', end: 1 });
  });

  it('follows backward pointers; end is just after the first pointer', () => {
    // offset 0: example.com. ; offset 13: "WWW" + pointer to 0 ; offset 19: pointer to 13
    const msg = bytes('076578616D706C6503636F6D00 03575757C000 C00D');
    expect(nameFromWire(msg, 13)).toEqual({ name: 'www.example.com.', end: 19 });
    expect(nameFromWire(msg, 19)).toEqual({ name: 'www.example.com.', end: 21 });
  });

  it('escapes special and non-printable bytes', () => {
    const msg = bytes('04612E2062 02FF41 00');
    expect(nameFromWire(msg, 0).name).toBe('a\\.\\032b.\\255a.');
  });

  it('rejects pointer loops and forward pointers, naming the byte offset', () => {
    const self = thrown(() => nameFromWire(bytes('0000 C002'), 2));
    expect(self.code).toBe('DNS_FORMAT');
    expect(self.message).toMatch(/byte offset 2 does not point backwards/);
    // Two pointers pointing at each other: the forward one is refused.
    const loop = thrown(() => nameFromWire(bytes('C002 C000'), 0));
    expect(loop.message).toMatch(/byte offset 0/);
  });

  it('stops a backward pointer that loops through a label', () => {
    // "a" at 0, then a pointer back to it at 2: each pass adds the label again.
    const e = thrown(() => nameFromWire(bytes('0161 C000'), 2));
    expect(e.code).toBe('DNS_FORMAT');
    expect(e.message).toMatch(/longer than 255 octets at byte offset 2|too many compression pointers/);
  });

  it('bounds the number of jumps', () => {
    // A root at 0 followed by 200 pointers, each to the one before it.
    const b = new Uint8Array(1 + 200 * 2);
    for (let k = 0; k < 200; k++) {
      const at = 1 + 2 * k;
      const target = k === 0 ? 0 : at - 2;
      b[at] = 0xc0 | (target >> 8);
      b[at + 1] = target & 0xff;
    }
    expect(nameFromWire(b, 1 + 2 * 100)).toEqual({ name: '.', end: 203 });
    expect(thrown(() => nameFromWire(b, 1 + 2 * 199)).message).toMatch(/too many compression pointers/);
  });

  it('rejects truncation, reserved label types and over-long names', () => {
    expect(thrown(() => nameFromWire(bytes('0361'), 0)).message).toMatch(/byte offset 0/);
    expect(thrown(() => nameFromWire(bytes('0161'), 0)).message).toMatch(/past the end .* byte offset 2/);
    expect(thrown(() => nameFromWire(bytes('C0'), 0)).message).toMatch(/truncated compression pointer at byte offset 0/);
    expect(thrown(() => nameFromWire(bytes('4100'), 0)).message).toMatch(/label type 0x40 at byte offset 0/);
    const long = new Uint8Array(5 * 64 + 1);
    for (let k = 0; k < 5; k++) {
      long[k * 64] = 63;
      long.fill(0x61, k * 64 + 1, k * 64 + 64);
    }
    expect(thrown(() => nameFromWire(long, 0)).message).toMatch(/longer than 255/);
  });
});

describe('reverseName', () => {
  it('reverses labels and is its own inverse', () => {
    expect(reverseName('www.example.com.')).toBe('com.example.www.');
    expect(reverseName('com.example.www.')).toBe('www.example.com.');
    expect(reverseName('com.')).toBe('com.');
    expect(reverseName('.')).toBe('.');
  });

  it('keeps escaped dots inside their label', () => {
    expect(reverseName('a\\.b.example.')).toBe('example.a\\.b.');
    expect(reverseName('x\\\\.y.')).toBe('y.x\\\\.');
    expect(reverseName('a\\..')).toBe('a\\..');
    expect(reverseName(reverseName('a\\.b.c\\046d.e.'))).toBe('a\\.b.c\\046d.e.');
  });
});
