// The listening socket is found by its port among this process's
// descriptors, and only that one is changed.

import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { setNotSentLowat } from '../../../src/server/socket-tuning.js';

function listen(host: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => resolve(s));
  });
}

describe('setNotSentLowat', () => {
  it('sets the option on the one socket listening on the port, IPv4 or IPv6', async () => {
    const v4 = await listen('127.0.0.1');
    const v6 = await listen('::1').catch(() => undefined);
    try {
      const port4 = (v4.address() as net.AddressInfo).port;
      expect(setNotSentLowat(port4, 128 << 10)).toBe(1);
      if (v6) expect(setNotSentLowat((v6.address() as net.AddressInfo).port, 128 << 10)).toBe(1);
      // A connected (not listening) socket on another port is left alone.
      const client = net.connect(port4, '127.0.0.1');
      await new Promise((r) => client.once('connect', r));
      expect(setNotSentLowat(client.localPort!, 128 << 10)).toBe(0);
      client.destroy();
    } finally {
      v4.close();
      v6?.close();
    }
  });

  it('refuses arguments that are not ports and sizes', () => {
    expect(() => setNotSentLowat(-1 as number, 1)).toThrow(/setNotSentLowat\(port: number, bytes: number\)/);
  });
});
