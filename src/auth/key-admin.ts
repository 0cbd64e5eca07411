// Key administration that `keys add` and `npm start` share: adding a key to
// a configured store, and asking whether a store holds any key.
//
// Contract: both name the store by its KeyStoreConfig (stores/
// open-key-store.ts), open it, and close it before they resolve; neither
// knows which implementation answers. hasKeys never creates a store. Errors
// about the options are LicenceError naming the CLI flag to fix.

import { canonicalKey, fingerprintOf, generateKey, hashKey } from './key-material.js';
import { licenceFromOptions } from './licence.js';
import type { NewKeyOptions } from './licence.js';
import { openExistingKeyStore, openKeyStore } from './stores/open-key-store.js';
import type { KeyStoreConfig } from './stores/open-key-store.js';
import { LicenceError } from '../errors/catalogue.js';

/**
 * Adds a key and resolves with it: the given key in canonical (lower-case)
 * form, or a fresh 64-hex-digit one. Rejects with LicenceError naming the
 * offending option; the store is created if needed.
 */
export async function addKey(config: KeyStoreConfig, opts: NewKeyOptions): Promise<string> {
  let key: string;
  if (opts.key !== undefined) {
    const canonical = canonicalKey(opts.key);
    if (canonical === undefined) throw new LicenceError('--key', 'must be 16 to 256 hex digits or dashes');
    key = canonical;
  } else {
    key = generateKey();
  }
  const keyHash = hashKey(key);
  const licence = licenceFromOptions(opts, keyHash, fingerprintOf(keyHash), Math.floor(Date.now() / 1000));
  const store = openKeyStore(config);
  try {
    await store.insert(licence);
  } finally {
    store.close();
  }
  return key;
}

/** Whether the configured store holds at least one key (revoked ones count); never creates the store. */
export async function hasKeys(config: KeyStoreConfig): Promise<boolean> {
  const store = openExistingKeyStore(config);
  if (store === undefined) return false;
  try {
    return await store.hasKeys();
  } finally {
    store.close();
  }
}
