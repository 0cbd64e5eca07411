// ShardWriter: aggregated RRsets in, one immutable shard file out.
//
// Contract: buildShardBody() takes RRsets that are already aggregated (see
// src/shard/rrset-table.ts; each key at most once) in any order and returns the
// FlatBuffer of schema/shard.fbs; writeShardFile() publishes it under a new
// name with the header of format.ts (lib/atomic-write.ts: temp file,
// fsync, rename; then an fsync of the directory).
// A shard file is never written twice: compaction writes new files and swaps
// the manifest. The writer re-reads and verifies what it wrote before it
// returns, so a bad disk cannot publish a shard that will be refused on load.
//
// buildShardBody is a pipeline of phases in src/shard/writer/, each taking
// the results it needs and returning its own: the RRsets in order
// (rrsets.ts, by the rule of rrset-order.ts), the rdata and their inverse
// indexes (rdata.ts), the flex sections (flex.ts), and the FlatBuffer
// (flatbuffer.ts). Cost: sorting dominates. Names and values are sorted as
// byte records by native/sort.cc (writer/blobs.ts), and grouping is done by
// sorting rather than by Maps keyed by fresh strings. The RRsets arrive
// interned in columns (RrsetTable), so the writer never hashes or compares an
// RRset's strings except to break rare ties.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { RrsetTable } from './rrset-table.js';
import { atomicWriteFile, syncDir } from '../lib/atomic-write.js';
import { encodeHeader, SHARD_FILE_SUFFIX } from './format.js';
import { openShard } from './shard-reader.js';
import { assembleShard } from './writer/flatbuffer.js';
import { joinPieces, type FlatBufferPieces } from './writer/piece-builder.js';
import { buildFlexNames, buildFlexRdata } from './writer/flex.js';
import { buildRdata, buildRdataIndex } from './writer/rdata.js';
import { orderRrsets, rankNames, rrsetColumns } from './writer/rrsets.js';

export { makeBlob, type BlobParts } from './writer/blobs.js';
export type { FlatBufferPieces } from './writer/piece-builder.js';

export interface ShardStats {
  rrsets: number;
  owners: number;
  rdata: number;
  flexRdataValues: number;
  bytes: number;
}

/**
 * Builds the shard of an RrsetTable's RRsets; the table is only read. The
 * FlatBuffer comes as pieces (writer/piece-builder.ts) that share the
 * table's and the phases' arrays: writeShardFile writes them with writev,
 * so no second copy of the shard is ever made.
 */
export function buildShard(table: RrsetTable, source: string, createdAt: number): { body: FlatBufferPieces; stats: ShardStats } {
  const ranks = rankNames(table);
  const { order, ownerStarts } = orderRrsets(table, ranks);
  const { columns: rrsets, totals } = rrsetColumns(table, order, ranks.bailiwickRank);
  const rdata = buildRdata(table, order);
  const index = buildRdataIndex(rdata);
  const flexNames = buildFlexNames(table.names.view(), ranks.ownerRank, ownerStarts, rrsets);
  const flexRdata = buildFlexRdata(rdata, rrsets);
  const body = assembleShard({
    owners: ranks.owners.sorted, ownerStarts, bailiwicks: ranks.bailiwicks.sorted,
    rrsets, totals, rdata, index, flexNames, flexRdata,
  }, source, createdAt);
  return {
    body,
    stats: {
      rrsets: table.size, owners: table.names.length, rdata: rdata.type.length,
      flexRdataValues: flexRdata.values.offsets.length - 1, bytes: body.byteLength,
    },
  };
}

/** buildShard with the FlatBuffer in one buffer (tests and tools: a copy of the whole shard). */
export function buildShardBody(table: RrsetTable, source: string, createdAt: number): { body: Uint8Array; stats: ShardStats } {
  const { body, stats } = buildShard(table, source, createdAt);
  return { body: joinPieces(body), stats };
}

/**
 * Publishes a shard body as `<dir>/<created>-<writer>-<random>.rrs`, where
 * `writer` is the run's WriterLock id (file-lock.ts): temp file, fsync, rename,
 * fsync of the directory, then a full verifying load of the final file.
 * Returns the file name (not the path). Nothing references the file until
 * the caller swaps it into the manifest.
 */
export async function writeShardFile(dir: string, body: FlatBufferPieces, createdAt: number, writer: string): Promise<string> {
  const name = shardFileName(createdAt, writer);
  const final = path.join(dir, name);
  await atomicWriteFile(dir, name, [encodeHeader(body.pieces), ...body.pieces], { sync: true, uniqueName: true, writing: `shard ${name}` });
  await syncDir(dir);
  // Read back through the same path a server takes: refuse to publish a shard it would refuse.
  try {
    openShard(final);
  } catch (err) {
    await fsp.rm(final, { force: true });
    throw err;
  }
  return name;
}

// A shard's name: <created>-<writer id>-<random>.rrs; its temp file the same
// with a leading dot and a trailing .tmp (atomicWriteFile's uniqueName). The writer's id lets a later run
// tell the shards of a writer that died unpublished from those of one still
// running (file-lock.ts, manifest.ts); once published it is only a name.
const SHARD_NAME = /^\.?\d{10}-([0-9a-f]{12})-[0-9a-f]{12}\.rrs(?:\.tmp)?$/;

function shardFileName(createdAt: number, writer: string): string {
  const name = `${createdAt.toString().padStart(10, '0')}-${writer}-${randomBytes(6).toString('hex')}${SHARD_FILE_SUFFIX}`;
  assert.ok(SHARD_NAME.test(name), `writer id ${writer} does not fit a shard name`);
  return name;
}

/** The writer id in a shard's (or its temp file's) name; undefined for any other name, shards named before writer ids included. */
export function writerOfShardFile(name: string): string | undefined {
  return SHARD_NAME.exec(name)?.[1];
}
