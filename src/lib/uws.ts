// Loads uWebSockets.js's native build and nothing else.
//
// The package we depend on (the npm alias of @trufflesuite/uws-js-unofficial)
// silently falls back to a pure-JS imitation when its native binary does not
// load. That fallback has other semantics and a fraction of the speed, so we
// require the binary ourselves, the same way its loader does, and refuse to
// start without it.

import { createRequire } from 'node:module';
import path from 'node:path';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** The native module's file, as the loader knows it (native/http10.cc finds the module by it). */
export const UWS_BINARY = path.join(path.dirname(require.resolve('uWebSockets.js/package.json')), 'binaries',
  `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);

function loadNative(): typeof UWS {
  const fallbackEnv = process.env['UWS_USE_FALLBACK'];
  if (fallbackEnv && /^(1|true)$/i.test(fallbackEnv)) {
    throw new Error('UWS_USE_FALLBACK is set: rrscan runs only on the native uWebSockets.js build; unset it');
  }
  const binary = UWS_BINARY;
  try {
    return require(binary) as typeof UWS;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native build did not load (${binary}): ${(err as Error).message}. ` +
      `rrscan refuses the package's JS fallback. Node ${process.version} (ABI ${process.versions.modules}) ` +
      'is supported by this build for Node 20 on linux-x64.',
    );
  }
}

export const uws = loadNative();
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
