import { describe, expect, it } from 'vitest';
import { canonicalKey, fingerprintOf, generateKey, hashKey, sameKeyHash } from '../../../src/auth/key-material.js';

describe('key material', () => {
  it('generates 64 lower-case hex digits, different each time', () => {
    const a = generateKey();
    const b = generateKey();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
  });

  it('accepts 16 to 256 hex digits or dashes, lower-casing them', () => {
    expect(canonicalKey('0123456789abcdef')).toBe('0123456789abcdef');
    expect(canonicalKey('0123456789ABCDEF')).toBe('0123456789abcdef');
    expect(canonicalKey('01234567-89ab-cdef-0123-456789abcdef')).toBe('01234567-89ab-cdef-0123-456789abcdef');
    expect(canonicalKey('a'.repeat(256))).toBe('a'.repeat(256));
  });

  it('refuses anything else without looking it up', () => {
    expect(canonicalKey(undefined)).toBeUndefined();
    expect(canonicalKey('')).toBeUndefined();
    expect(canonicalKey('0123456789abcde')).toBeUndefined(); // 15 characters
    expect(canonicalKey('a'.repeat(257))).toBeUndefined();
    expect(canonicalKey('0123456789abcdeg')).toBeUndefined();
    expect(canonicalKey('0123456789abcde ')).toBeUndefined();
    expect(canonicalKey('0123456789abcdef\n')).toBeUndefined();
  });

  it('hashes with sha256 and fingerprints with its first 12 hex digits', () => {
    const h = hashKey('0123456789abcdef');
    expect(h.toString('hex')).toBe('9f9f5111f7b27a781f1f1ddde5ebc2dd2b796bfc7365c9c28b548e564176929f');
    expect(fingerprintOf(h)).toBe('9f9f5111f7b2');
  });

  it('compares hashes in constant time and only 32-byte ones', () => {
    const h = hashKey('0123456789abcdef');
    expect(sameKeyHash(h, Buffer.from(h))).toBe(true);
    expect(sameKeyHash(h, hashKey('0123456789abcdee'))).toBe(false);
    expect(sameKeyHash(h.subarray(0, 16), h.subarray(0, 16))).toBe(false);
  });
});
