// pcap and pcapng captures -> Observations of the DNS responses inside. The
// public entry of src/ingest/pcap/; the modules beside it are its layers.
//
// Contract: pcapObservations(file, ctx) streams the file (LIMITS.
// sensorReadChunkBytes at a time, ctx.progress after each read), detects
// classic pcap (pcap-file.ts) or pcapng (pcapng-file.ts) by its magic, and
// decodes each packet (packet-decoder.ts: link layer in link-layer.ts; IPv4
// and IPv6 with fragment reassembly in ip-defrag.ts; UDP, and TCP
// reassembled per direction and cut into DNS messages in
// tcp-reassembly.ts; either port 53). Each DNS response goes to
// observeResponse (sensor.ts) timed by its packet, in whole seconds; for a
// reassembled message, the packet that completed it. Every reassembly
// buffer is bounded (LIMITS.ip*, LIMITS.tcp*). What is rejected and what is
// only counted is decided in outcomes.ts.
//
// pcapResponses(file, ctx, opts) is the first half on its own: the parsed
// responses with their time and transport, for tests and tools that count
// records the way other tools do.

import type { Observation } from '../../model/observation.js';
import type { IngestContext } from '../context.js';
import { ChunkedFile, observeResponse, sensorStats, type TimedResponse } from '../sensor.js';
import { rejectInput } from './outcomes.js';
import { PacketDecoder } from './packet-decoder.js';
import { isPcapMagic, readPcap } from './pcap-file.js';
import { PCAPNG_SHB, readPcapng } from './pcapng-file.js';

export async function* pcapObservations(file: string, ctx: IngestContext): AsyncIterable<Observation> {
  const stats = sensorStats(ctx);
  for await (const r of pcapResponses(file, ctx)) {
    const obs = observeResponse(r.msg, r.timeSec, undefined, stats);
    for (let i = 0; i < obs.length; i++) yield obs[i]!;
  }
}

export interface PcapReadOptions {
  /** Also yield TC=1 responses that parse (pcapObservations never does): for counting records the way other tools do. */
  keepTruncated?: boolean;
}

/**
 * The parsed DNS responses of a capture (QR=1, TC=0 unless asked), each with
 * its packet time and transport, before any record filtering:
 * pcapObservations' first half, exported for tests and tools. A message's
 * arrays are its own; consume it before asking for the next.
 */
export async function* pcapResponses(file: string, ctx: IngestContext, opts: PcapReadOptions = {}): AsyncIterable<TimedResponse> {
  const stats = sensorStats(ctx);
  const src = await ChunkedFile.open(file, ctx);
  try {
    await src.fill(4);
    if (src.avail < 4) {
      rejectInput(ctx, stats, 'byte offset 0', 'file too short for a pcap or pcapng header');
      return;
    }
    const magic = src.buf.readUInt32LE(src.start);
    const decoder = new PacketDecoder(file, ctx, stats, opts.keepTruncated === true);
    if (magic === PCAPNG_SHB) yield* readPcapng(src, decoder, ctx, stats);
    else if (isPcapMagic(magic)) yield* readPcap(src, decoder, ctx, stats);
    else {
      rejectInput(ctx, stats, 'byte offset 0', `not a pcap or pcapng file (magic 0x${magic.toString(16).padStart(8, '0')})`);
      return;
    }
    decoder.finish();
  } finally {
    await src.close();
  }
}
