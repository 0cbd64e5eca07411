// The service log: JSON lines (pino) on stderr, so stdout stays free for
// what a person at `npm start` reads. Keys are never logged, only their
// fingerprint; for keys with query privacy the query text is left out too.

import { pino } from 'pino';

export const log = pino({
  level: process.env['RRSCAN_LOG_LEVEL'] ?? 'info',
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
}, pino.destination({ dest: 2, sync: false }));

export type Log = typeof log;
