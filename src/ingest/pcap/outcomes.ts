// What becomes of everything a capture holds: a DNS response kept, a skip
// counted, or a reject. The policy for all pcap modules lives here.
//
// Bad input versus ordinary traffic. A port-53 capture is full of things
// that are not DNS responses, and --max-errors must not trip on them, so:
//   - reject (ctx.reject, counts toward --max-errors): a file that is not a
//     capture (bad magic), a corrupt or truncated record (the reading stops
//     there: its framing can no longer be trusted), and a DNS response
//     (QR=1, plausible header) that was captured whole, arrived by UDP or a
//     TCP stream we saw open, and still fails to parse: that is either
//     corrupt data or a gap in our parser, and someone should look.
//   - skip silently, counted in sensorStats(ctx): queries; responses with
//     TC=1 (their RRsets may be incomplete); payloads shorter than a DNS
//     header or with an impossible header (other protocols squatting on
//     port 53); payloads cut by the capture's snaplen; messages from a TCP
//     stream joined midway (its framing is a guess); non-IP frames, other
//     ports and protocols, malformed IP/UDP/TCP headers; unknown link types;
//     fragments and streams dropped by a reassembly bound or left unfinished.
// Every shared capture (compactor, dnscap, go-dnscollector, zeek) reads with
// no reject under these rules.

import type { DnsMessage } from '../../dns/message.js';
import { parseMessage } from '../../dns/message.js';
import { hasCode, IngestError } from '../../errors/catalogue.js';
import type { IngestContext } from '../context.js';
import type { SensorStats, TimedResponse } from '../sensor.js';
import { u16 } from '../../lib/bytes.js';

/** Rejects the capture's input at `where` (a corrupt record, a file that is not a capture). */
export function rejectInput(ctx: IngestContext, stats: SensorStats, where: string, reason: string): void {
  stats.rejected++;
  ctx.reject(new IngestError(ctx.file, where, reason));
}

/** The packet being decoded: its 1-based number, the file offset of its record, and its time in whole seconds. */
export interface PacketPlace {
  packetNo: number;
  packetOffset: number;
  sec: number;
}

/**
 * A header that could be a DNS response: a defined opcode (QUERY, IQUERY,
 * STATUS, NOTIFY, UPDATE, DSO) and at most one question, which every
 * server sends. Anything else on port 53 we treat as another protocol.
 */
function plausibleHeader(p: Uint8Array): boolean {
  const opcode = (p[2]! >> 3) & 0x0f;
  if (opcode === 3 || opcode > 6) return false;
  return u16(p, 4) <= 1;
}

/** Sorts DNS payloads into kept responses (in `out`), counted skips and rejects. */
export class DnsPayloads {
  readonly out: TimedResponse[] = [];

  constructor(private readonly file: string, private readonly ctx: IngestContext, private readonly stats: SensorStats,
    private readonly keepTruncated: boolean, private readonly place: PacketPlace) {}

  /**
   * One UDP payload or TCP message of the current packet. `cut`: the capture
   * lost its end; `midStream`: it comes from a TCP stream joined midway.
   */
  add(payload: Uint8Array, cut: boolean, midStream: boolean, transport: 'udp' | 'tcp'): void {
    const stats = this.stats;
    if (payload.length < 12) {
      if (cut) stats.snaplenCut++;
      else stats.notDns++;
      return;
    }
    const flags = payload[2]!;
    // Header checks first: parsing queries we then throw away would cost most of the time.
    if ((flags & 0x80) === 0) {
      stats.queries++;
      return;
    }
    const truncated = (flags & 0x02) !== 0;
    if (truncated && !this.keepTruncated) {
      stats.truncatedResponses++;
      return;
    }
    let msg: DnsMessage;
    try {
      msg = parseMessage(payload);
    } catch (err) {
      if (!hasCode(err, 'DNS_FORMAT')) throw err;
      this.unparsed(payload, err as Error, truncated, cut, midStream);
      return;
    }
    this.out.push({ msg, timeSec: this.place.sec, transport });
  }

  /** A response that failed to parse: counted when the failure is explained, rejected when it is not. */
  private unparsed(payload: Uint8Array, err: Error, truncated: boolean, cut: boolean, midStream: boolean): void {
    const stats = this.stats;
    if (truncated) stats.truncatedResponses++;
    else if (cut) stats.snaplenCut++;
    else if (midStream || !plausibleHeader(payload)) stats.notDns++;
    else {
      stats.rejected++;
      this.ctx.reject(new IngestError(this.file, `packet ${this.place.packetNo} (byte offset ${this.place.packetOffset})`,
        `DNS response does not parse: ${err.message}`));
    }
  }
}
