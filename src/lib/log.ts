// The one shape every part logs through. pino's Logger satisfies it; the
// CLI hands the service log (server/log.ts) to the parts below the server,
// which may not import it.

export interface Log {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/** A Log that drops everything: for tools and tests that log nothing. */
export const silentLog: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
