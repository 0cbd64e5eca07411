// The service log: JSON lines (pino) on stderr, so stdout stays free for
// what a person at `npm start` reads. Keys are never logged, only their
// fingerprint; for keys with query privacy the query text is left out too.

import { pino } from 'pino';

// The front-end processes of `serve --processes N` share one stderr. A
// write of at most PIPE_BUF (4,096 bytes on Linux) to a pipe, or any write
// to an O_APPEND file, lands whole, and pino's buffer splits writes only
// between lines, so their lines never interleave (a single line longer than
// that is the exception). Members name themselves in every line
// (process-group.ts).
const PIPE_BUF_BYTES = 4_096;

export const log = pino({
  level: process.env['RRSCAN_LOG_LEVEL'] ?? 'info',
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
}, pino.destination({ dest: 2, sync: false, maxWrite: PIPE_BUF_BYTES }));

export type Log = typeof log;
