// The one catalogue of coded errors.
//
// Each HTTP-facing entry carries the exact wire text the spec gives
// (service-spec.md section 7, compat.md "Status codes"), its status and its
// content type. Code paths throw or return `ApiError`s by code; the server
// writes `status`, `contentType` and `body` verbatim. Every error here is a
// CodedError with a stable `code`. Errors that cross the worker boundary
// arrive as structured-clone copies, so callers match on the code, never on
// `instanceof` (undici's advice), and always through hasCode(), whose
// codes are a union type: a misspelt code does not compile.
//
// test/unit/errors/catalogue.test.ts fails when this list and the spec's list
// of 400 texts disagree.

export type ContentKind = 'text/plain' | 'text/html';

interface Entry {
  readonly status: number;
  readonly text: string;
  readonly contentType: ContentKind;
}

const e = (status: number, text: string, contentType: ContentKind = 'text/plain'): Entry =>
  Object.freeze({ status, text, contentType });

export const API_ERRORS = Object.freeze({
  // 400: spec section 7, in the spec's order.
  EXCEPTION: e(400, 'Error: exception occurred'),
  UNPARSABLE_REQUEST: e(400, 'Error: unable to parse request'),
  BAD_SEARCH_METHOD: e(400, 'Error: SEARCH_METHOD has an unsupported value'),
  BAD_WHAT_TO_SEARCH: e(400, 'Error: WHAT_TO_SEARCH has an unsupported value'),
  BAD_RRTYPE: e(400, 'Error: RRTYPE has an unsupported value'),
  BAD_RRTYPE_DNSSEC: e(400, 'Error: RRTYPE has an unsupported DNSSEC value'),
  MISSING_SEGMENT: e(400, 'Error: REQUEST_URI is missing path segment'),
  TOO_MANY_SEGMENTS: e(400, 'Error: REQUEST_URI has too many path segments'),
  NO_REQUEST_URI: e(400, 'Error: REQUEST_URI not available from environment'),
  BAD_PREFIX: e(400, 'Error: REQUEST_URI does not start with the service path prefix'),
  // Auth and quota: spec section 5 and 7, compat.md.
  NOT_AUTHORISED: e(401, 'Error: Not authorized for this API version'),
  QUOTA_EXPIRED: e(401, 'Error: Quota is expired'),
  BAD_API_KEY: e(403, 'Error: Bad API key'),
  NOT_FOUND: e(404, '<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n', 'text/html'),
  NOT_ACCEPTABLE: e(415, 'Error: Unsupported Media Type'),
  OFFSET_NOT_ALLOWED: e(416, 'Error: Offset is not allowed'),
  OFFSET_TOO_LARGE: e(416, 'Error: Offset exceeds the maximum allowed'),
  RATE_LIMITED: e(429, 'Error: Rate limit exceeded'),
  INTERNAL: e(500,
    '<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>\n', 'text/html'),
  TOO_MANY_CONNECTIONS: e(503, 'Error: Too many concurrent connections'),
  OVERLOADED: e(503, 'Error: Server is overloaded, try again later'),
});

export type ApiErrorCode = keyof typeof API_ERRORS;

/**
 * An error with a stable code: what callers match on (hasCode), since a
 * copy from another thread or process keeps its fields but not its class.
 * Each subclass fixes its code (ApiError: one of the catalogue's).
 */
export class CodedError<C extends string> extends Error {
  readonly code: C;
  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** Every coded error class: the union of their codes is ErrorCode (a new class joins here, or hasCode refuses its code). */
type RrscanError =
  | ApiError | IngestError | DiskFullError | DataDirMissingError | TlsPairError | DnsFormatError | ShardCorruptError
  | ManifestError | CompactionConflictError | IngestedMeanwhileError | PatternError | CidrError | LicenceError
  | KeyStoreVersionError | ClickHouseError | InjectedFaultError;

/**
 * Codes of errors from below rrscan that it matches on: the system's errno
 * names (file system, sockets), Node's own, and SQLite's (better-sqlite3).
 * Listed, like ours, so that a misspelt one does not compile.
 */
export type ForeignErrorCode =
  | 'ENOENT' | 'ENOTDIR' | 'EEXIST' | 'EACCES' | 'EISDIR' | 'ENAMETOOLONG' | 'ELOOP' | 'EIO' | 'ENOSPC' | 'EDQUOT'
  | 'ECONNRESET' | 'ERR_INVALID_ARG_VALUE'
  | 'SQLITE_BUSY' | 'SQLITE_LOCKED' | 'SQLITE_FULL' | 'SQLITE_CONSTRAINT_PRIMARYKEY';

export type ErrorCode = RrscanError['code'] | ForeignErrorCode;

/**
 * Whether `err` carries one of `codes`: any object with a `code` field, so
 * also the plain copies that worker threads and child processes hand over,
 * and the errors of Node and SQLite. The one way to match an error.
 */
export function hasCode(err: unknown, ...codes: readonly ErrorCode[]): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (codes as readonly string[]).includes(code);
}

export class ApiError extends CodedError<ApiErrorCode> {
  readonly status: number;
  readonly contentType: ContentKind;
  /** `cause`: what made the service refuse (e.g. the key store's full disk), for the log; never sent. */
  constructor(code: ApiErrorCode, detail?: string, cause?: unknown) {
    const entry = API_ERRORS[code];
    super(code, detail ? `${entry.text} (${detail})` : entry.text, cause === undefined ? undefined : { cause });
    this.name = 'ApiError';
    this.status = entry.status;
    this.contentType = entry.contentType;
  }
  /** The exact body sent to the client: the catalogue text, never the detail. */
  get body(): string {
    return API_ERRORS[this.code].text;
  }
}

export function isApiError(err: unknown): err is { code: ApiErrorCode } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' &&
    Object.prototype.hasOwnProperty.call(API_ERRORS, (err as { code: string }).code);
}

// In-stream failures (a `failed` terminator after 200 has gone out).
export const STREAM_MESSAGES = Object.freeze({
  NO_RESULTS: 'Query completed, no results found',
  LIMITED: 'Result limit reached',
  SCAN_TIMEOUT: 'Query timed out',
  INTERNAL: 'Internal error',
  SHUTDOWN: 'Server is shutting down',
  /** A shard this answer read was found damaged while it ran (search/local/shard-set.ts); it is out of service now. */
  DATA_DAMAGED: 'Data file damaged during query, try again',
  HTTP10_TOO_LARGE: 'Answer too large for HTTP/1.0; ask with HTTP/1.1 or a smaller limit',
  /** A watch's reader fell LIMITS.watchQueueBytesMax behind what the feed delivered (search/watch-hub.ts). */
  WATCH_BEHIND: 'Watch fell behind its reader; watch again with time_first_after set to the last time_first received',
  /** A watch's catch-up found more than LIMITS.watchCatchUpTuplesMax tuples: the earliest were sent. */
  WATCH_CATCH_UP_TOO_LARGE: 'Too many results to catch up at once; watch again with time_first_after set to the last time_first received',
});

/**
 * A bad ingest record or file. `where` names the place a person can go to:
 * "line 12", "packet 88", "byte offset 4096". Carries `code` so it survives
 * structured cloning.
 */
export class IngestError extends CodedError<'INGEST_BAD_INPUT'> {
  readonly file: string;
  readonly where: string;
  readonly reason: string;
  constructor(file: string, where: string, reason: string) {
    super('INGEST_BAD_INPUT', `${file}: ${where}: ${reason}`);
    this.name = 'IngestError';
    this.file = file;
    this.where = where;
    this.reason = reason;
  }
}

/**
 * A write to the data directory that the file system refused for want of
 * space: ENOSPC, or EDQUOT (the user's disk quota is used up). The message
 * names the directory and what was being written, so the operator knows
 * which disk to free. Ingest and compaction delete what they wrote before
 * they report it, so it always means "nothing was published".
 */
export class DiskFullError extends CodedError<'DISK_FULL'> {
  readonly dir: string;
  constructor(dir: string, writing: string, cause: unknown) {
    super('DISK_FULL', `${dir}: no space left on device (writing ${writing})`, { cause });
    this.name = 'DiskFullError';
    this.dir = dir;
  }
}

/** `err` as a DiskFullError when the file system said ENOSPC or EDQUOT; any other error unchanged. */
export function asDiskFull(err: unknown, dir: string, writing: string): unknown {
  return hasCode(err, 'ENOSPC', 'EDQUOT') ? new DiskFullError(dir, writing, err) : err;
}

/**
 * A data directory that is not there (or is not a directory) when a server
 * starts: a typo'd `--data` must not look like an empty dataset, so serve
 * refuses it rather than creating it. The message names the path and how to
 * make one.
 */
export class DataDirMissingError extends CodedError<'DATA_DIR_MISSING'> {
  readonly dir: string;
  constructor(dir: string, reason: 'missing' | 'not-a-directory') {
    super('DATA_DIR_MISSING', reason === 'missing'
      ? `${dir}: no such data directory (check the path; \`rrscan ingest --data DIR FILE\` or \`rrscan demo --data DIR\` creates one)`
      : `${dir}: not a directory (--data names the directory that holds manifest.json and the shards)`);
    this.name = 'DataDirMissingError';
    this.dir = dir;
  }
}

/**
 * A TLS certificate and key that a server cannot serve with (serve
 * --tls-cert/--tls-key): a file missing or unreadable, no PEM certificate
 * or key in it, an encrypted key, a key that is not the certificate's, or
 * a pair uWebSockets.js's TLS library refuses. The message is one line
 * naming the flag, the file and the reason; serve prints it and exits 2
 * rather than crash or serve plain HTTP.
 */
export class TlsPairError extends CodedError<'TLS_PAIR_INVALID'> {
  constructor(message: string, cause?: unknown) {
    super('TLS_PAIR_INVALID', message, cause === undefined ? undefined : { cause });
    this.name = 'TlsPairError';
  }
}

/** A DNS name or rdata that cannot be encoded or decoded. Callers wrap it in an IngestError with the place. */
export class DnsFormatError extends CodedError<'DNS_FORMAT'> {
  constructor(message: string) {
    super('DNS_FORMAT', message);
    this.name = 'DnsFormatError';
  }
}

/** A shard file that fails its header or checksum checks. Never half-read. */
export class ShardCorruptError extends CodedError<'SHARD_CORRUPT'> {
  constructor(file: string, reason: string) {
    super('SHARD_CORRUPT', `${file}: corrupt shard: ${reason}`);
    this.name = 'ShardCorruptError';
  }
}

/**
 * A manifest.json that cannot be trusted: not JSON, another version, or an
 * entry that is not a bare shard file name of the data directory (a path
 * would let one entry reach any file, and name a shard twice). Readers keep
 * what they had and refuse the whole file; writers refuse to build on it.
 */
export class ManifestError extends CodedError<'MANIFEST_INVALID'> {
  constructor(file: string, reason: string) {
    super('MANIFEST_INVALID', `${file}: manifest refused: ${reason}`);
    this.name = 'ManifestError';
  }
}

/**
 * A compaction whose inputs another compaction merged first (both chose the
 * same shards): publishing it would count their RRsets twice, so its shards
 * are deleted and the manifest is left as the other one made it. Running it
 * again merges what is live now.
 */
export class CompactionConflictError extends CodedError<'COMPACTION_CONFLICT'> {
  constructor(dataDir: string, file: string) {
    super('COMPACTION_CONFLICT', `${dataDir}: shard ${file} was merged by another compaction while this one ran; nothing was published`);
    this.name = 'CompactionConflictError';
  }
}

/**
 * An ingest run into shards one of whose input files another run published
 * while it ran (the input ledger, shard/ledger.ts): publishing would count
 * that file's sightings twice, so the run's shards are deleted and nothing
 * is published. Running it again skips that file.
 */
export class IngestedMeanwhileError extends CodedError<'INGESTED_MEANWHILE'> {
  constructor(file: string, sha256: string, shard: string) {
    super('INGESTED_MEANWHILE', `${file}: ingested by another run while this one ran (sha256 ${sha256.slice(0, 12)}…, shard ${shard}); ` +
      'nothing was published; run again to skip it');
    this.name = 'IngestedMeanwhileError';
  }
}

/** A regex or glob that cannot be compiled; message names the offending position. */
export class PatternError extends CodedError<'BAD_PATTERN'> {
  constructor(message: string) {
    super('BAD_PATTERN', message);
    this.name = 'PatternError';
  }
}

/**
 * An address or CIDR that does not parse (lib/address-allow-list.ts). The
 * message quotes the text; callers prefix the flag it came from
 * (`keys add --allow-cidr` as a LicenceError, `ingest --allow-cidr`).
 */
export class CidrError extends CodedError<'BAD_CIDR'> {
  constructor(message: string) {
    super('BAD_CIDR', message);
    this.name = 'CidrError';
  }
}

/**
 * A licence option that cannot be stored (from `rrscan keys add` or addKey()):
 * `option` names the flag, e.g. "--burst-window", so the operator knows what to fix.
 */
export class LicenceError extends CodedError<'BAD_LICENCE'> {
  readonly option: string;
  constructor(option: string, reason: string) {
    super('BAD_LICENCE', `${option}: ${reason}`);
    this.name = 'LicenceError';
    this.option = option;
  }
}

/**
 * A key store (keys.sqlite) this build cannot use as it is: written by a
 * newer release (its schema version is above the newest this build knows:
 * running an older build after an upgrade), or holding a version that is
 * not a number at all. Nothing is changed in the file. The message names
 * the file, the version found and the newest this build reads.
 */
export class KeyStoreVersionError extends CodedError<'KEY_STORE_VERSION'> {
  constructor(file: string, found: string, newest: number) {
    super('KEY_STORE_VERSION', /^[0-9]+$/.test(found)
      ? `${file}: key store schema version ${found} is newer than this build reads (${newest} at most): it was written by ` +
        'a newer rrscan release; run that release (or a later one), or restore a copy taken before the upgrade'
      : `${file}: key store schema version ${JSON.stringify(found)} is not a version this build knows (it reads 0 to ${newest})`);
    this.name = 'KeyStoreVersionError';
  }
}

/**
 * ClickHouse refused a statement or could not be reached (src/clickhouse/):
 * `status` is the HTTP status (0 when no answer came), the message is
 * ClickHouse's own text. Also what the one literal-escaping function throws
 * for a value it will not inline (not well-formed UTF-16, over its bound).
 */
export class ClickHouseError extends CodedError<'CLICKHOUSE'> {
  readonly status: number;
  constructor(message: string, status = 0) {
    super('CLICKHOUSE', message);
    this.name = 'ClickHouseError';
    this.status = status;
  }
}

/**
 * A failure that RRSCAN_FAULTS asked for (src/lib/faults.ts; tests only).
 * Nothing handles it by name: it travels the path a real failure at its
 * place would take. Carries `code` so it survives structured cloning.
 */
export class InjectedFaultError extends CodedError<'INJECTED_FAULT'> {
  constructor(fault: string, subject?: string) {
    super('INJECTED_FAULT', `injected fault: ${fault}${subject !== undefined ? ` (${subject})` : ''}`);
    this.name = 'InjectedFaultError';
  }
}
