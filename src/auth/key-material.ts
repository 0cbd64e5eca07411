// Key material: generating API keys, checking their shape, hashing them for
// storage, and deriving the short fingerprint that logs and `keys list` show.
//
// Contract: the store never sees a key, only sha256(key) (32 bytes); a key is
// never logged, only fingerprintOf(hash). Keys are hex digits or dashes (spec
// section 5) and compare case-insensitively, because hex digits do: a key is
// lower-cased before it is hashed, both when it is added and when it arrives
// in X-API-Key.

import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import assert from 'node:assert/strict';
import { LIMITS } from '../config/limits.js';

/** Bytes of a stored key hash (sha256). */
export const KEY_HASH_BYTES = 32;
/** Hex digits of a fingerprint: 48 bits tell keys apart in logs yet say nothing usable about the key. */
const FINGERPRINT_HEX_CHARS = 12;
/** Our own fixed pattern (never user-supplied), so V8 RegExp is fine here. */
const KEY_SHAPE = /^[0-9a-f-]+$/;

/** A fresh key: 32 random bytes as 64 lower-case hex digits. */
export function generateKey(): string {
  return randomBytes(32).toString('hex');
}

/**
 * The key in its canonical (lower-case) form, or undefined when it cannot be
 * a key at all: wrong characters or a length outside LIMITS.apiKeyChars*.
 * Requests with such keys are refused without touching the store.
 */
export function canonicalKey(text: string | undefined): string | undefined {
  if (text === undefined || text.length < LIMITS.apiKeyCharsMin || text.length > LIMITS.apiKeyCharsMax) return undefined;
  const lower = text.toLowerCase();
  return KEY_SHAPE.test(lower) ? lower : undefined;
}

/** sha256 of a canonical key: the only form in which keys are stored or looked up. */
export function hashKey(canonical: string): Buffer {
  return hash('sha256', canonical, 'buffer');
}

/** Short non-reversible id for logs: the first 12 hex digits of sha256(key). */
export function fingerprintOf(keyHash: Uint8Array): string {
  assert.equal(keyHash.length, KEY_HASH_BYTES, 'a key hash is 32 bytes');
  return Buffer.from(keyHash.buffer, keyHash.byteOffset, keyHash.byteLength).toString('hex', 0, FINGERPRINT_HEX_CHARS / 2);
}

/** Constant-time comparison of two key hashes (the lookup found a row; this confirms it without a timing oracle). */
export function sameKeyHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === KEY_HASH_BYTES && b.length === KEY_HASH_BYTES && timingSafeEqual(a, b);
}
