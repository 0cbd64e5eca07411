// What the receiver logs through: pino's Logger satisfies it (the CLI hands
// in the service log, src/server/log.ts, which ingest may not import).

export interface LiveLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}
