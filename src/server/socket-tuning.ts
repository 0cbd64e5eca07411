// Kernel socket tuning for the listening socket (native/socket.cc).
//
// TCP_NOTSENT_LOWAT caps the unsent data the kernel holds per connection
// and lets a slow reader's socket report progress sooner (see the addon for
// the why and the figures).

import { loadAddon } from '../lib/native.js';

interface SocketAddon {
  setNotSentLowat(port: number, bytes: number): number;
}

const addon = loadAddon<SocketAddon>('rrscan_socket');

/** Sets TCP_NOTSENT_LOWAT on this process's socket listening on `port`; returns how many sockets changed (1). */
export function setNotSentLowat(port: number, bytes: number): number {
  return addon.setNotSentLowat(port, bytes);
}
