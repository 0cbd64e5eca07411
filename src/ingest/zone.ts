// Zone-file source: RFC 1035 master files (and `dig AXFR` output, which is
// one) -> one Observation per RRset.
//
// Contract. Understands $ORIGIN, $TTL, $INCLUDE (path relative to the
// including file, origin restored afterwards, nesting bounded by
// LIMITS.zoneIncludeDepthMax and the number followed by
// LIMITS.zoneIncludesMax, confined to the include roots: see below),
// relative names and "@", a blank owner meaning
// the previous owner, TTL and class in either order (both optional),
// parentheses across lines, `;` comments, quoted strings with escapes, the
// RFC 3597 `\#` form, every type in rrtype.ts and TYPEnnn. Only class IN is
// kept; other classes, meta types and bad records are handed to ctx.reject
// with the file and line, and parsing goes on with the next record.
//
// Records are grouped into RRsets by (owner, type) with identical rdata
// counted once: the SOA that AXFR output repeats at its end, or a record
// listed twice, adds nothing. A file is grouped in memory (bounded by
// LIMITS.zoneRrsetsPerFileMax, in columns: zone-rrsets.ts) because master
// files need not keep an RRset's records together; the file itself is
// streamed in chunks.
//
// Each RRset becomes { count 1, bailiwick = the zone origin, zone times =
// observedAt, sensor times 0 }. The zone origin is --origin, else the first
// $ORIGIN, else the owner of the first SOA, else the root. observedAt is
// --observed-at, else the date in an SOA serial of the form YYYYMMDDnn
// (00:00 UTC), else now.
//
// $INCLUDE reads only regular files under the include roots: the directory
// of the zone file given and each --include-root DIR, and below. Without
// that a zone file (often someone else's: a customer's, an AXFR from a
// partner) could publish any file the ingest user may read, and its
// rejected lines would quote that file's tokens on stderr. The check is on
// the real path (realpath: `..` and symlinks resolved) and, on Linux, again
// on the file actually opened (/proc/self/fd), so a directory swapped for a
// symlink between the check and the open is caught too. An include that is
// refused is a bad record of the including file's line, like an include
// that is missing: it counts against --max-errors and names the path, never
// anything read from it (the file is not opened). A path that is outside
// every root as written is refused before the file system is asked about
// it, so the refusal says nothing of whether that file exists.

import { open, readlink, realpath, stat } from 'node:fs/promises';
import { isAscii } from 'node:buffer';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { hasCode, IngestError } from '../errors/catalogue.js';
import { normalizeName } from '../dns/name.js';
import { rdataFromTokensView, parseTtl, tokenize, Tokens, type TokenizerState } from '../dns/rdata/index.js';
import { isMetaType, RR, rrtypeFromText, rrtypeToText } from '../dns/rrtype.js';
import type { Observation } from '../model/observation.js';
import { LineReader } from '../lib/line-reader.js';
import { ZoneRrsets } from './zone-rrsets.js';
import type { IngestContext } from './context.js';

export interface ZoneOptions {
  /** --origin: the zone's name; relative names start from it and it is every RRset's bailiwick. */
  origin?: string;
  /** --observed-at: epoch seconds to record as the zone time. */
  observedAt?: number;
  /** --include-root: directories besides the zone file's own whose files (and their subdirectories') $INCLUDE may read. */
  includeRoots?: readonly string[];
}

/** The directories $INCLUDE may read under: as given (resolved to absolute) and as real paths. */
interface IncludeRoots {
  readonly given: readonly string[];
  readonly real: readonly string[];
}

/** A record error: becomes an IngestError with the file and line. */
class RecordError extends Error {}

/** An $INCLUDE found outside the include roots only once opened: a reject of its line, as when found before. */
class IncludeRefusal extends Error {}

/** Per-file parsing state; an $INCLUDE gets its own. */
interface FileState {
  file: string;
  depth: number;
  origin: string | undefined;
  prevOwnerToken: string | undefined;
  prevOwner: string | undefined;
  lineNo: number;
  // The logical record being assembled (it may span lines inside parentheses).
  tokens: Tokens;
  tok: TokenizerState;
  recordLine: number;
  blankOwner: boolean;
  recordBytes: number;
  recordError: string | undefined;
}

interface IncludeRequest {
  file: string;
  origin: string | undefined;
  line: number;
}

/**
 * Errors opening an $INCLUDE file that the name written in the zone file
 * caused, so a reject of that line rather than a failed run. A NUL byte in
 * the name makes Node throw ERR_INVALID_ARG_VALUE before any system call.
 */
const INCLUDE_NAME_ERRORS = ['ENOENT', 'EACCES', 'EISDIR', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'ERR_INVALID_ARG_VALUE'] as const;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NON_ASCII = /[\x80-\xff]/;
const CLASSES = new Set(['IN', 'CH', 'CHAOS', 'HS', 'HESIOD', 'CS', 'NONE', 'ANY']);

function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Whether `p` is `dir` or below it; both absolute and normalised. */
function isUnder(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Where the file open on `fd` really is, by /proc/self/fd (Linux); undefined
 * where there is no /proc to ask, and the realpath check before the open is
 * all there is.
 */
async function openedPath(fd: number): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** Offset just after the uncompressed wire name at w[p] (past the end when there is none). */
function skipName(w: Uint8Array, p: number): number {
  while (p < w.length && w[p] !== 0) p += w[p]! + 1;
  return p + 1;
}

/**
 * 00:00 UTC of the date in a serial like 2024101100 (YYYYMMDDnn), in epoch
 * seconds; undefined unless it is a real calendar date between 1985 and
 * 2099 (serials that count seconds or are plain counters are not dates).
 */
export function serialDate(serial: number): number | undefined {
  if (serial < 1_985_010_100 || serial > 2_099_123_199) return undefined;
  const y = Math.floor(serial / 1_000_000);
  const m = Math.floor(serial / 10_000) % 100;
  const d = Math.floor(serial / 100) % 100;
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const ms = Date.UTC(y, m - 1, d);
  if (new Date(ms).getUTCDate() !== d) return undefined;
  return ms / 1000;
}

class ZoneParser {
  readonly rrsets = new ZoneRrsets();
  firstDollarOrigin: string | undefined;
  firstSoaOwner: string | undefined;
  firstSoaSerial: number | undefined;
  /** $INCLUDEs followed so far, at any depth (LIMITS.zoneIncludesMax). */
  private includes = 0;

  constructor(private readonly ctx: IngestContext, private readonly roots: IncludeRoots) {}

  /** Refuses an RRset past LIMITS.zoneRrsetsPerFileMax (called before each new one is made). */
  private readonly admit = (): void => {
    if (this.rrsets.size >= LIMITS.zoneRrsetsPerFileMax) {
      throw new IngestError(this.ctx.file, 'whole file', `more than ${LIMITS.zoneRrsetsPerFileMax} RRsets in one zone file; split it`);
    }
  };

  private reject(fs: FileState, line: number, reason: string): void {
    this.ctx.reject(new IngestError(fs.file, `line ${line}`, reason));
  }

  /**
   * Reads `file` (named so in messages; its $INCLUDEs are relative to it).
   * An included file is opened by its real path `real`, already checked to
   * lie under the include roots; what is opened is checked once more before
   * a byte of it is read (an IncludeRefusal when it is not there after all).
   */
  async readFile(file: string, depth: number, origin: string | undefined, topLevel: boolean, real?: string): Promise<void> {
    const fs: FileState = {
      file, depth, origin, prevOwnerToken: undefined, prevOwner: undefined, lineNo: 0,
      tokens: new Tokens(), tok: { depth: 0 }, recordLine: 0, blankOwner: false, recordBytes: 0, recordError: undefined,
    };
    const fh = await open(real ?? file, 'r');
    if (real !== undefined) {
      const opened = await openedPath(fh.fd);
      const refusal = opened !== undefined && !this.underRoot(opened, false) ? this.outside(file, opened)
        : !(await fh.stat()).isFile() ? `$INCLUDE ${file}: not a regular file` : undefined;
      if (refusal !== undefined) {
        await fh.close();
        throw new IncludeRefusal(refusal);
      }
    }
    try {
      const lines = new LineReader({ lineBytesMax: LIMITS.ingestLineBytesMax, bufferBytes: LIMITS.lineReadBufferBytes });
      let bytesRead = 0;
      for (;;) {
        const n = await lines.fill(fh, bytesRead);
        bytesRead += n;
        // One check per read spares the per-line UTF-8 test for ASCII files.
        const ascii = isAscii(lines.bytes);
        while (lines.next()) {
          fs.lineNo = lines.lineNo;
          if (lines.tooLong) {
            // Its bytes were never held: reported once, and the record it was part of goes with it.
            this.reject(fs, fs.lineNo, lines.tooLongReason);
            this.abandonRecord(fs);
            continue;
          }
          const include = this.line(fs, lines.bytes, lines.start, lines.end, ascii);
          if (include) await this.include(fs, include);
        }
        if (n === 0) break;
        if (topLevel) this.ctx.progress?.(bytesRead);
      }
    } finally {
      await fh.close();
    }
    if (fs.tok.depth > 0) {
      this.reject(fs, fs.recordLine, 'unbalanced "(": the record never closes before the end of the file');
    }
  }

  private abandonRecord(fs: FileState): void {
    fs.tokens.clear();
    fs.tok.depth = 0;
    fs.recordError = undefined;
  }

  private async include(fs: FileState, req: IncludeRequest): Promise<void> {
    if (fs.depth + 1 > LIMITS.zoneIncludeDepthMax) {
      this.reject(fs, req.line, `$INCLUDE nested deeper than ${LIMITS.zoneIncludeDepthMax} files`);
      return;
    }
    if (++this.includes > LIMITS.zoneIncludesMax) {
      this.reject(fs, req.line, `$INCLUDE ${req.file}: more than ${LIMITS.zoneIncludesMax} $INCLUDEs in one zone file`);
      return;
    }
    // As written first: a path outside every root is refused without asking whether it exists.
    if (!this.underRoot(req.file, true)) {
      this.reject(fs, req.line, this.outside(req.file, undefined));
      return;
    }
    try {
      const real = await realpath(req.file);
      if (!this.underRoot(real, false)) {
        this.reject(fs, req.line, this.outside(req.file, real));
        return;
      }
      // Before the open: opening a FIFO would wait for a writer, a device might never end.
      if (!(await stat(real)).isFile()) {
        this.reject(fs, req.line, `$INCLUDE ${req.file}: not a regular file`);
        return;
      }
      await this.readFile(req.file, fs.depth + 1, req.origin, false, real);
    } catch (err) {
      if (err instanceof IncludeRefusal) {
        this.reject(fs, req.line, err.message);
        return;
      }
      if (hasCode(err, ...INCLUDE_NAME_ERRORS)) {
        this.reject(fs, req.line, `$INCLUDE ${req.file}: ${(err as Error).message}`);
        return;
      }
      throw err;
    }
  }

  /** Whether `p` lies under an include root: by their real paths, or (`asWritten`) also as they were given. */
  private underRoot(p: string, asWritten: boolean): boolean {
    return this.roots.real.some((r) => isUnder(p, r)) || (asWritten && this.roots.given.some((r) => isUnder(p, r)));
  }

  /** The refusal of an $INCLUDE of `file`, which is `real` once symlinks are resolved (when known and different). */
  private outside(file: string, real: string | undefined): string {
    const resolved = real !== undefined && real !== file ? ` resolves to ${real}, which is` : ' is';
    return `$INCLUDE ${file}${resolved} not under ${this.roots.real.join(' or ')}: $INCLUDE reads only below the zone ` +
      'file\'s directory and each --include-root DIR';
  }

  /**
   * One physical line, buf[start, end) (without its CR and LF), number
   * fs.lineNo. Returns an include request when the
   * line completes an $INCLUDE directive (the caller reads it, since that is
   * asynchronous).
   */
  private line(fs: FileState, buf: Buffer, start: number, end: number, ascii: boolean): IncludeRequest | undefined {
    if (fs.tok.depth === 0) {
      // A new logical record starts here.
      fs.tokens.clear();
      fs.recordLine = fs.lineNo;
      fs.recordBytes = 0;
      fs.recordError = undefined;
      const c = end > start ? buf[start]! : 0;
      fs.blankOwner = c === 0x20 || c === 0x09;
    }
    let text = buf.toString('latin1', start, end);
    if (!ascii && NON_ASCII.test(text)) {
      try {
        text = utf8.decode(buf.subarray(start, end));
      } catch {
        fs.recordError ??= 'not valid UTF-8 (write such bytes as \\DDD)';
      }
    }
    fs.recordBytes += end - start;
    if (fs.recordBytes > LIMITS.ingestLineBytesMax) fs.recordError ??= `record longer than ${LIMITS.ingestLineBytesMax} bytes`;
    try {
      tokenize(text, fs.tokens, fs.tok);
    } catch (err) {
      if (!hasCode(err, 'DNS_FORMAT')) throw err;
      fs.recordError ??= (err as Error).message;
      fs.tok.depth = 0;
    }
    if (fs.recordError !== undefined && fs.tokens.length > 64) fs.tokens.clear(); // keep no more than needed
    if (fs.tok.depth > 0) return undefined;
    if (fs.recordError !== undefined) {
      this.reject(fs, fs.recordLine, fs.recordError);
      fs.recordError = undefined;
      return undefined;
    }
    if (fs.tokens.length === 0) return undefined;
    try {
      return this.record(fs);
    } catch (err) {
      if (!hasCode(err, 'DNS_FORMAT') && !(err instanceof RecordError)) throw err;
      this.reject(fs, fs.recordLine, (err as Error).message);
      return undefined;
    }
  }

  /** One complete logical record in fs.tokens. */
  private record(fs: FileState): IncludeRequest | undefined {
    const toks = fs.tokens;
    let i = 0;
    let owner: string;
    if (!fs.blankOwner) {
      const t0 = toks.text[0]!;
      if (!toks.quoted[0] && t0.charCodeAt(0) === 0x24 /* $ */) return this.directive(fs);
      if (t0 === fs.prevOwnerToken && fs.prevOwner !== undefined) {
        owner = fs.prevOwner;
      } else {
        owner = normalizeName(t0, fs.origin);
        fs.prevOwnerToken = t0;
        fs.prevOwner = owner;
      }
      i = 1;
    } else {
      if (fs.prevOwner === undefined) throw new RecordError('record without an owner name (line starts with a blank, no previous owner)');
      owner = fs.prevOwner;
    }
    // Optional TTL and class, in either order.
    let rrclass = 'IN';
    for (let k = 0; k < 2 && i < toks.length && !toks.quoted[i]; k++) {
      const t = toks.text[i]!;
      if (isAsciiDigit(t.charCodeAt(0))) {
        if (parseTtl(t) === undefined) throw new RecordError(`bad TTL "${t.slice(0, 40)}"`);
        i++;
        continue;
      }
      const up = t.toUpperCase();
      if (CLASSES.has(up) || /^CLASS\d{1,5}$/.test(up)) {
        rrclass = up;
        i++;
        continue;
      }
      break;
    }
    if (i >= toks.length) throw new RecordError('record has no type');
    const typeText = toks.text[i]!;
    const rrtype = toks.quoted[i] ? undefined : rrtypeFromText(typeText);
    if (rrtype === undefined) throw new RecordError(`unknown type "${typeText.slice(0, 40)}"`);
    if (rrclass !== 'IN' && rrclass !== 'CLASS1') throw new RecordError(`class ${rrclass} is not supported (only IN is kept)`);
    if (isMetaType(rrtype)) throw new RecordError(`type ${rrtypeToText(rrtype)} cannot appear in a zone file`);
    const wire = rdataFromTokensView(rrtype, toks, i + 1, fs.origin);
    this.rrsets.add(owner, rrtype, wire, this.admit);
    if (rrtype === RR.SOA && this.firstSoaOwner === undefined) {
      this.firstSoaOwner = owner;
      // `SOA \# 0` is accepted as a record but has no serial.
      const p = skipName(wire, skipName(wire, 0));
      if (p + 4 <= wire.length) this.firstSoaSerial = ((wire[p]! << 24) | (wire[p + 1]! << 16) | (wire[p + 2]! << 8) | wire[p + 3]!) >>> 0;
    }
    return undefined;
  }

  private directive(fs: FileState): IncludeRequest | undefined {
    const toks = fs.tokens;
    const name = toks.text[0]!.toUpperCase();
    const arg = (k: number): string => {
      if (k >= toks.length || toks.quoted[k]) throw new RecordError(`${name} needs an argument`);
      return toks.text[k]!;
    };
    switch (name) {
      case '$ORIGIN': {
        if (toks.length > 2) throw new RecordError('$ORIGIN takes one name');
        fs.origin = normalizeName(arg(1), fs.origin);
        this.firstDollarOrigin ??= fs.origin;
        return undefined;
      }
      case '$TTL':
        if (parseTtl(arg(1)) === undefined || toks.length > 2) throw new RecordError(`bad $TTL "${arg(1).slice(0, 40)}"`);
        return undefined;
      case '$INCLUDE': {
        if (toks.length > 3) throw new RecordError('$INCLUDE takes a file name and an optional origin');
        const target = path.resolve(path.dirname(fs.file), arg(1));
        const origin = toks.length > 2 ? normalizeName(arg(2), fs.origin) : fs.origin;
        return { file: target, origin, line: fs.recordLine };
      }
      case '$GENERATE':
        throw new RecordError('$GENERATE is not supported');
      default:
        throw new RecordError(`unknown directive ${name.slice(0, 40)}`);
    }
  }
}

/** The zone file's directory and the --include-root directories, as given and as real paths (duplicates once). */
async function includeRoots(file: string, extra: readonly string[]): Promise<IncludeRoots> {
  if (extra.length > LIMITS.zoneIncludeRootsMax) {
    throw new IngestError(file, '--include-root', `at most ${LIMITS.zoneIncludeRootsMax} directories`);
  }
  const given = [path.dirname(path.resolve(file)), ...extra.map((d) => path.resolve(d))];
  const real: string[] = [];
  for (const [i, dir] of given.entries()) {
    try {
      real.push(await realpath(dir));
    } catch (err) {
      // The zone file's own directory fails with the file itself, as the open that follows would.
      if (i === 0) throw err;
      throw new IngestError(file, '--include-root', `${dir}: ${(err as Error).message}`);
    }
  }
  return { given: [...new Set(given)], real: [...new Set(real)] };
}

/** Parses one zone file (and what it includes) into one Observation per RRset. */
export async function* zoneObservations(file: string, ctx: IngestContext, opts: ZoneOptions): AsyncIterable<Observation> {
  let origin: string | undefined;
  if (opts.origin !== undefined) {
    try {
      origin = normalizeName(opts.origin);
    } catch (err) {
      throw new IngestError(file, '--origin', (err as Error).message);
    }
  }
  const parser = new ZoneParser(ctx, await includeRoots(file, opts.includeRoots ?? []));
  await parser.readFile(file, 0, origin, true);

  const bailiwick = origin ?? parser.firstDollarOrigin ?? parser.firstSoaOwner ?? '.';
  const serialTime = parser.firstSoaSerial === undefined ? undefined : serialDate(parser.firstSoaSerial);
  const observedAt = opts.observedAt ?? serialTime ?? Math.floor(Date.now() / 1000);
  for (const g of parser.rrsets.rrsets()) {
    yield {
      rrname: g.rrname,
      rrtype: g.rrtype,
      bailiwick,
      rdata: g.rdata,
      count: 1,
      timeFirst: 0,
      timeLast: 0,
      zoneTimeFirst: observedAt,
      zoneTimeLast: observedAt,
    };
  }
}
