#!/usr/bin/env node
// The `rrscan` command. The TypeScript is compiled by `npm install` (the
// `prepare` script); this stub only loads the compiled entry point.
import('../dist/src/cli/main.js').catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  console.error('rrscan: is the project built? Run `npm install` (or `npm run build`).');
  process.exit(1);
});
