// The `rrscan` command line. Operators script against these names and
// flags (issue 2, issue 5): keep them stable. Each command is a file of its
// own (ingest.ts, serve.ts, clickhouse.ts, compact.ts, demo.ts, start.ts,
// keys.ts) and each flag is defined once, in its command's file or, when
// several take it, in flags.ts; the commands themselves are thin calls into
// src/. This file only assembles them, in the order help lists them.

import { Command } from 'commander';
import { registerClickHouseCommand } from './clickhouse.js';
import { registerCompactCommand } from './compact.js';
import { registerDemoCommand } from './demo.js';
import { registerIngestCommand } from './ingest.js';
import { registerKeysCommand } from './keys.js';
import { registerServeCommand } from './serve.js';
import { registerStartCommand } from './start.js';

export function buildProgram(): Command {
  const program = new Command('rrscan').description('passive-DNS query service').showHelpAfterError();
  registerIngestCommand(program);
  registerServeCommand(program);
  registerClickHouseCommand(program);
  registerCompactCommand(program);
  registerDemoCommand(program);
  registerStartCommand(program);
  registerKeysCommand(program);
  return program;
}

buildProgram().parseAsync(process.argv).catch((err: unknown) => {
  console.error(`rrscan: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
