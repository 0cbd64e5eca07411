import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestObservations } from '../../../src/ingest/run.js';
import type { Observation } from '../../../src/model/observation.js';
import { rdataFromText } from '../../../src/dns/rdata/index.js';
import { ShardReader } from '../../../src/shard/shard-reader.js';
import { blobRecord } from '../../../src/shard/blob.js';
import { readManifest } from '../../../src/shard/manifest.js';
import { removeDir, tempDir } from '../../helpers/rrscan.js';

const obs = (rrname: string, rrtype: number, texts: string[], t: number): Observation => ({
  rrname, rrtype, bailiwick: 'example.', count: 2,
  rdata: texts.map((text) => ({ text, wire: rdataFromText(rrtype, text) })),
  timeFirst: t, timeLast: t + 100, zoneTimeFirst: 0, zoneTimeLast: 0,
});

describe('shard files', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = tempDir();
    await ingestObservations([
      obs('www.example.', 1, ['192.0.2.1', '192.0.2.2'], 1000),
      obs('mail.example.', 15, ['10 mx.example.'], 2000),
      obs('example.', 2, ['ns1.example.', 'ns2.example.'], 500),
    ], dir, 'test', undefined, 1_700_000_000);
    file = path.join(dir, readManifest(dir).shards[0]!.file);
  });
  afterAll(() => removeDir(dir));

  it('reads back every column it wrote', () => {
    const s = ShardReader.open(file);
    expect(s.rrsetCount).toBe(3);
    expect(s.timeMin).toBe(500);
    expect(s.timeMax).toBe(2100);
    // Owners are reversed and sorted; flex names forward and sorted.
    expect([0, 1, 2].map((i) => blobRecord(s.owners, i))).toEqual(['example.', 'example.mail.', 'example.www.']);
    expect([0, 1, 2].map((i) => blobRecord(s.flexNames, i))).toEqual(['example.', 'mail.example.', 'www.example.']);
    expect(s.flexNames.blob.toString('latin1')).toBe('example.\nmail.example.\nwww.example.\n');
    expect(Array.from(s.flexNames.offsets)).toEqual([0, 9, 23, 36]);
    expect(Array.from(s.rrsets.rrtype)).toEqual([2, 15, 1]);
    expect(Array.from(s.rrsets.count)).toEqual([2, 2, 2]);
    expect(Array.from(s.index.ip4Keys)).toEqual([0xc0000201, 0xc0000202]);
    // rdata values that flexible rdata search covers: names/text types only.
    expect(s.flexRdata.blob.toString('latin1')).toBe('10 mx.example.\nns1.example.\nns2.example.\n');
  });

  it('refuses a truncated, padded or bit-flipped shard with a clear error', () => {
    const bytes = readFileSync(file);
    const bad = path.join(dir, 'bad.rrs');
    writeFileSync(bad, bytes.subarray(0, bytes.length - 1));
    expect(() => ShardReader.open(bad)).toThrow(/bad\.rrs: corrupt shard: length \d+, header says \d+/);
    writeFileSync(bad, Buffer.concat([bytes, Buffer.from([0])]));
    expect(() => ShardReader.open(bad)).toThrow(/corrupt shard: length/);
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 40]! ^= 0x01;
    writeFileSync(bad, flipped);
    expect(() => ShardReader.open(bad)).toThrow(/corrupt shard: body checksum mismatch/);
    const header = Buffer.from(bytes);
    header[16]! ^= 0x01;
    writeFileSync(bad, header);
    expect(() => ShardReader.open(bad)).toThrow(/corrupt shard: header checksum mismatch/);
    writeFileSync(bad, Buffer.from('not a shard at all, just some text bytes'));
    expect(() => ShardReader.open(bad)).toThrow(/bad magic/);
    writeFileSync(bad, Buffer.alloc(10));
    expect(() => ShardReader.open(bad)).toThrow(/truncated/);
  });

  it('leaves no temp files behind', () => {
    copyFileSync(file, path.join(dir, 'copy.rrs'));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
