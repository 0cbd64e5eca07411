// --listen addresses: `unix:/path/to.sock` or `tcp:HOST:PORT` (an IPv6 host
// in brackets, `tcp:[::1]:6000`; port 0 takes any free port, and the
// receiver prints the real one).

import { existsSync, lstatSync, rmSync } from 'node:fs';
import net from 'node:net';

export type ListenAddress = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number };

/** Parses a --listen value; throws an Error saying what is wrong. */
export function parseListenAddress(text: string): ListenAddress {
  if (text.startsWith('unix:')) {
    const p = text.slice('unix:'.length);
    if (p === '') throw new Error(`${text}: a unix address needs a path (unix:/path/to.sock)`);
    return { kind: 'unix', path: p };
  }
  const m = /^tcp:(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (m) {
    const port = Number(m[3]);
    if (port > 65_535) throw new Error(`${text}: port ${port} is above 65535`);
    return { kind: 'tcp', host: m[1] ?? m[2]!, port };
  }
  throw new Error(`${text}: expected unix:/path/to.sock or tcp:HOST:PORT`);
}

/** The address as --listen spells it, with the port the server really holds. */
export function formatListenAddress(a: ListenAddress, boundPort?: number): string {
  if (a.kind === 'unix') return `unix:${a.path}`;
  const host = a.host.includes(':') ? `[${a.host}]` : a.host;
  return `tcp:${host}:${boundPort ?? a.port}`;
}

/**
 * Deletes a unix socket file that nothing listens on (a receiver killed with
 * -9 leaves its socket behind, and listen() would fail with EADDRINUSE).
 * A socket something still answers on is left alone, and so is any file
 * that is not a socket.
 */
export async function removeStaleSocket(p: string): Promise<void> {
  if (!existsSync(p) || !lstatSync(p).isSocket()) return;
  const alive = await new Promise<boolean>((resolve) => {
    const s = net.connect(p);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (!alive) rmSync(p, { force: true });
}
