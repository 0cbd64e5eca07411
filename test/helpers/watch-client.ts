// A client of a standing watch (GET .../watch/...): the stream read as it
// arrives, over a real socket, so that a test can wait for the next object,
// hang up, or wait for the terminator. Keep-alive lines are kept in `text`
// and left out of `body()`, which is what exact assertions compare.

import http from 'node:http';
import { withoutKeepAlives } from './rrscan.js';

export class WatchClient {
  text = '';
  status = 0;
  /** Settles with the status line. */
  readonly response: Promise<number>;
  /** Settles when the stream has ended (complete: it ended whole, not cut or hung up). */
  readonly ended: Promise<{ complete: boolean }>;
  private req!: http.ClientRequest;
  private waiters: (() => void)[] = [];
  private over = false;

  constructor(port: number, pathAndQuery: string, key: string) {
    let onResponse!: (status: number) => void;
    let onEnd!: (e: { complete: boolean }) => void;
    this.response = new Promise((r) => { onResponse = r; });
    this.ended = new Promise((r) => { onEnd = r; });
    const end = (complete: boolean) => {
      if (this.over) return;
      this.over = true;
      this.wake();
      onEnd({ complete });
    };
    this.req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, headers: { 'X-API-Key': key }, agent: false }, (res) => {
      this.status = res.statusCode ?? 0;
      onResponse(this.status);
      res.setEncoding('utf8');
      res.on('data', (t: string) => {
        this.text += t;
        this.wake();
      });
      res.on('end', () => end(true));
      res.on('close', () => end(res.complete));
      res.on('error', () => end(false));
    });
    this.req.on('error', () => {
      onResponse(0);
      end(false);
    });
    this.req.end();
  }

  /** The body so far without its keep-alive lines, whole lines only. */
  body(): string {
    return withoutKeepAlives(this.text.slice(0, this.text.lastIndexOf('\n') + 1)).body;
  }

  /** The `obj` payloads so far. */
  objects(): Record<string, unknown>[] {
    return this.body().split('\n').filter((l) => l.startsWith('{"obj"'))
      .map((l) => (JSON.parse(l) as { obj: Record<string, unknown> }).obj);
  }

  /** Resolves once `probe` holds of the stream (checked at every chunk), or fails after `timeoutMs`. */
  async until(what: string, probe: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!probe()) {
      if (this.over) throw new Error(`stream ended before ${what}: ${JSON.stringify(this.text)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the begin line (the watch was admitted). */
  begun(timeoutMs?: number): Promise<void> {
    return this.until('begin', () => this.text.startsWith('{"cond":"begin"}\n'), timeoutMs);
  }

  /** Waits until `n` objects have arrived; answers them. */
  async objectsAtLeast(n: number, timeoutMs?: number): Promise<Record<string, unknown>[]> {
    await this.until(`${n} objects`, () => this.objects().length >= n, timeoutMs);
    return this.objects();
  }

  /** Destroys the connection (a client that hangs up). */
  hangUp(): void {
    this.req.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
