// The baseline for bench/lookup.ts: a bare uWebSockets.js hello-world, the
// same native build the server uses.
import { uws } from '../src/lib/uws.js';

const app = uws.App().get('/*', (res) => {
  res.end('{"ping":"ok"}\n');
});
app.listen('127.0.0.1', 0, (sock) => {
  process.send?.(uws.us_socket_local_port(sock));
});
