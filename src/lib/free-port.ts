// A TCP port nobody listens on right now: the kernel picks one for a probe
// socket that is closed at once. Racy by nature (another process may take it
// before the caller binds it); for tests, benchmarks, and the supervisor of
// `serve --processes` turning `--port 0` into one port for all its members.

import net from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
