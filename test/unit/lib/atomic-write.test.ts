// atomicWriteFile (lib/atomic-write.ts), the one whole-file replacement of
// shards, manifest.json and verified.json: the new bytes or the old ones,
// never a temp file left behind. (A real full disk: test/integration/full-disk.test.ts.)

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { atomicWriteFile, syncDir } from '../../../src/lib/atomic-write.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'rrscan-atomic-write-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let dirNo = 0;
const freshDir = (): string => {
  const d = path.join(tmp, `d${dirNo++}`);
  mkdirSync(d);
  return d;
};

describe('atomicWriteFile', () => {
  it('replaces a file with text or pieces, with or without fsync, leaving no temp file', async () => {
    const dir = freshDir();
    await atomicWriteFile(dir, 'a.json', '{"v":1}\n', { sync: true });
    expect(readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('{"v":1}\n');
    await atomicWriteFile(dir, 'a.json', 'é\n', { sync: false });
    expect(readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('é\n');
    const pieces = [Buffer.from('head'), new Uint8Array(0), Buffer.alloc(100_000, 7), Uint8Array.of(1, 2, 3)];
    await atomicWriteFile(dir, 'b.rrs', pieces, { sync: true, uniqueName: true });
    expect(readFileSync(path.join(dir, 'b.rrs'))).toEqual(Buffer.concat(pieces));
    await syncDir(dir);
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.rrs']);
  });

  it('a failure leaves the old file as it was and deletes the temp file', async () => {
    const dir = freshDir();
    // The rename fails: the target is a directory that is not empty.
    mkdirSync(path.join(dir, 'target', 'inside'), { recursive: true });
    await expect(atomicWriteFile(dir, 'target', 'new\n', { sync: true })).rejects.toMatchObject({ code: expect.stringMatching(/^E/) });
    expect(readdirSync(dir)).toEqual(['target']);
  });

  it('with uniqueName, never touches a temp file it did not create', async () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, '.s.rrs.tmp'), 'someone else\'s');
    await expect(atomicWriteFile(dir, 's.rrs', 'mine', { sync: true, uniqueName: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(path.join(dir, '.s.rrs.tmp'), 'utf8')).toBe('someone else\'s');
    expect(readdirSync(dir)).toEqual(['.s.rrs.tmp']);
  });
});
