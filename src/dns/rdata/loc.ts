// LOC (RFC 1876): location as latitude, longitude, altitude and three sizes;
// both directions. Its fields depend on each other (hemisphere letters end
// angles of one to three numbers, sizes are optional), so it has its own
// codec instead of a schema entry.
//
// Contract: output is `d m s.sss N|S d m s.sss E|W alt.cm sizes`, sizes in
// metres without needless decimals; only version 0 has a presentation (other
// versions and out-of-range fields are NOT_CANONICAL). Input accepts omitted
// minutes, seconds and sizes (RFC 1876 defaults) and throws DnsFormatError
// for values out of range.

import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';
import { num } from './numbers.js';
import type { Tokens } from './tokens.js';
import { malformed, NOT_CANONICAL, u32 } from './wire.js';
import { put32, put8 } from './writer.js';

/** Latitude and longitude are stored as thousandths of an arc second offset by 2^31 (the equator, the prime meridian). */
const LOC_EQUATOR = 2 ** 31;
/** Altitude is stored in centimetres above 100,000 m below the WGS 84 spheroid. */
const LOC_ALT_BASE_CM = 10_000_000;
const MS_PER_DEGREE = 3_600_000;

// ---- Wire -> text

function locSizeText(byte: number): string {
  const m = byte >> 4, e = byte & 15;
  if (m > 9 || e > 9 || (m === 0 && e !== 0)) throw NOT_CANONICAL;
  const cm = m * 10 ** e;
  return cm % 100 === 0 ? `${cm / 100}m` : `${Math.floor(cm / 100)}.${String(cm % 100).padStart(2, '0')}m`;
}

function locAngleText(v: number, pos: string, negSide: string, maxDeg: number): string {
  let d = v - LOC_EQUATOR;
  const side = d < 0 ? negSide : pos;
  d = Math.abs(d);
  if (d > maxDeg * MS_PER_DEGREE) throw NOT_CANONICAL;
  const deg = Math.floor(d / MS_PER_DEGREE);
  const min = Math.floor((d % MS_PER_DEGREE) / 60_000);
  const ms = d % 60_000;
  return `${deg} ${min} ${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')} ${side}`;
}

export function locText(b: Uint8Array): string {
  if (b.length !== 16) throw malformed(`LOC rdata of ${b.length} octets`);
  if (b[0] !== 0) throw NOT_CANONICAL; // only version 0 is defined
  const altCm = u32(b, 12) - LOC_ALT_BASE_CM;
  const a = Math.abs(altCm);
  const alt = `${altCm < 0 ? '-' : ''}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}m`;
  return `${locAngleText(u32(b, 4), 'N', 'S', 90)} ${locAngleText(u32(b, 8), 'E', 'W', 180)} ${alt} ` +
    `${locSizeText(b[1]!)} ${locSizeText(b[2]!)} ${locSizeText(b[3]!)}`;
}

// ---- Text -> wire

// Index of the word after the angle locAngle read last.
let angleEnd = 0;

/** Thousandths of an arc second of `d [m [s.sss]]`. */
function angleMs(parts: string[], maxDeg: number): number {
  const deg = num(parts[0]!, maxDeg, 'LOC degrees');
  const min = parts.length > 1 ? num(parts[1]!, 59, 'LOC minutes') : 0;
  let ms = 0;
  if (parts.length > 2) {
    const m = /^(\d{1,2})(?:\.(\d{1,3}))?$/.exec(parts[2]!);
    if (!m || Number(m[1]) > 59) throw new DnsFormatError(`bad LOC seconds "${printable(parts[2]!)}"`);
    ms = Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
  }
  const total = deg * MS_PER_DEGREE + min * 60_000 + ms;
  if (total > maxDeg * MS_PER_DEGREE) throw new DnsFormatError(`LOC angle beyond ${maxDeg} degrees`);
  return total;
}

/** The stored value of `d [m [s]] {pos|neg}` from toks[i]; sets angleEnd. */
function locAngle(toks: Tokens, i: number, pos: string, neg: string, maxDeg: number): number {
  const parts: string[] = [];
  while (i < toks.length && parts.length < 4) {
    const t = toks.text[i++]!;
    const up = t.toUpperCase();
    if (up === pos || up === neg) {
      if (parts.length === 0) break;
      const total = angleMs(parts, maxDeg);
      angleEnd = i;
      return up === pos ? LOC_EQUATOR + total : LOC_EQUATOR - total;
    }
    parts.push(t);
  }
  throw new DnsFormatError(`bad LOC ${pos === 'N' ? 'latitude' : 'longitude'}`);
}

/** Centimetres of a LOC distance like "10m", "-2.5m", "0.01". */
function locMetres(tok: string, allowNegative: boolean): number {
  const m = /^(-?)(\d{1,8})(?:\.(\d{1,2}))?m?$/i.exec(tok);
  if (!m || (m[1] && !allowNegative)) throw new DnsFormatError(`bad LOC distance "${printable(tok)}"`);
  const cm = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -cm : cm;
}

/** RFC 1876 size byte: mantissa and power of ten of centimetres, rounded down. */
function locSizeByte(cm: number): number {
  let e = 0;
  while (e < 9 && cm >= 10 ** (e + 1)) e++;
  const m = Math.min(9, Math.floor(cm / 10 ** e));
  return m === 0 ? 0 : (m << 4) | e;
}

export function putLoc(toks: Tokens, i: number): void {
  const lat = locAngle(toks, i, 'N', 'S', 90);
  const lon = locAngle(toks, angleEnd, 'E', 'W', 180);
  i = angleEnd;
  if (i >= toks.length) throw new DnsFormatError('LOC needs an altitude');
  const alt = locMetres(toks.text[i++]!, true) + LOC_ALT_BASE_CM;
  if (alt < 0 || alt > 0xffffffff) throw new DnsFormatError('LOC altitude out of range');
  // Defaults (RFC 1876 section 3): size 1 m, horizontal 10,000 m, vertical 10 m.
  const sizes = [0x12, 0x16, 0x13];
  for (let k = 0; k < 3 && i < toks.length; k++) {
    const cm = locMetres(toks.text[i++]!, false);
    if (cm > 9 * 10 ** 9) throw new DnsFormatError('LOC size out of range');
    sizes[k] = locSizeByte(cm);
  }
  if (i < toks.length) throw new DnsFormatError('trailing fields after LOC');
  put8(0);
  put8(sizes[0]!);
  put8(sizes[1]!);
  put8(sizes[2]!);
  put32(lat);
  put32(lon);
  put32(alt);
}
