// The replaying dnstap sender the live benchmarks share (live-dnstap.ts,
// live-query.ts): one frame per A RRset, built with the test fixtures' wire
// builders, and a Frame Streams session (READY, ACCEPT, START ... STOP,
// FINISH) that writes with backpressure.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { weightOf, type PolicyShard } from '../src/shard/compaction-policy.js';
import { AA, QR, a, control, dnsMessage, dnstapFrame } from '../test/unit/ingest/wire-fixtures.js';

export const DNSTAP = 'protobuf:dnstap.Dnstap';

/** An AUTH_RESPONSE frame answering `name` with one A record, `zone` as dnstap's query_zone (the bailiwick). */
export function aFrame(name: string, ip: string, zone: string, timeSec: number): Uint8Array {
  const response = dnsMessage({ flags: QR | AA, qname: name, answer: [{ name, type: 1, rdata: a(ip) }] });
  return dnstapFrame({ type: 2, responseTimeSec: timeSec, response, zone });
}

/** RRsets ingest ever published into `dataDir`: merges keep the sum of weights, so this counts flushes' RRsets. */
export function publishedRrsets(dataDir: string): number {
  try {
    const m = JSON.parse(readFileSync(path.join(dataDir, 'manifest.json'), 'utf8')) as { shards: PolicyShard[] };
    return m.shards.reduce((n, s) => n + weightOf(s), 0);
  } catch {
    return 0;
  }
}

/** One sender's Frame Streams session: `open` does READY/ACCEPT/START, `write` the frames, `finish` STOP/FINISH. */
export class FstrmSession {
  private got = Buffer.alloc(0);
  private readonly controls: number[] = [];
  private readonly waiters: (() => void)[] = [];

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.got = Buffer.concat([this.got, d]);
      while (this.got.length >= 12 && this.got.length >= 8 + this.got.readUInt32BE(4)) {
        this.controls.push(this.got.readUInt32BE(8));
        this.got = this.got.subarray(8 + this.got.readUInt32BE(4));
      }
      this.waiters.splice(0).forEach((w) => w());
    });
  }

  /** `address` as the receiver prints it: unix:PATH or tcp:HOST:PORT. */
  static async open(address: string): Promise<FstrmSession> {
    const socket = address.startsWith('unix:') ? net.connect(address.slice(5))
      : net.connect(Number(address.slice(address.lastIndexOf(':') + 1)), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const s = new FstrmSession(socket);
    socket.write(control(4, DNSTAP));
    if (await s.next() !== 1) throw new Error('no ACCEPT');
    socket.write(control(2, DNSTAP));
    return s;
  }

  /** Writes frames, waiting for the socket to drain (the receiver pauses senders while a flush runs). */
  async write(body: Uint8Array): Promise<void> {
    if (!this.socket.write(body)) await new Promise<void>((r) => this.socket.once('drain', () => r()));
  }

  async finish(): Promise<void> {
    this.socket.write(control(3));
    if (await this.next() !== 5) throw new Error('no FINISH');
    this.socket.destroy();
  }

  private async next(): Promise<number> {
    while (this.controls.length === 0) await new Promise<void>((r) => this.waiters.push(r));
    return this.controls.shift()!;
  }
}
