// Whether a server on a loopback port answers a one-line probe (Redis's
// PING, ZooKeeper's ruok): the readiness check of the test harnesses that
// start real servers. A probe that errs, is refused or takes over a second
// counts as no answer, and the harness tries again.

import net from 'node:net';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Sends `request` to 127.0.0.1:`port` and resolves with `judge`'s verdict on
 * the reply so far: called on each chunk and once more when the server ends
 * the connection (`ended`); undefined means "not decided yet".
 */
export function probeAnswers(port: number, request: string,
  judge: (reply: string, ended: boolean) => boolean | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write(request));
    sock.on('data', (d: Buffer) => {
      reply += d.toString();
      const verdict = judge(reply, false);
      if (verdict !== undefined) done(verdict);
    });
    sock.once('end', () => done(judge(reply, true) ?? false));
  });
}
