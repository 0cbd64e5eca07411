// HTTP over a raw TCP socket, for what node:http hides or cannot do: any
// request line (HTTP/1.0 among them), the status line and header lines
// exactly as sent, a reader that takes the answer at a set rate or stops
// reading, and whether the server closed the connection.

import net from 'node:net';

export interface RawReply {
  /** Everything received, as sent. */
  raw: string;
  /** The status line without its CRLF. */
  statusLine: string;
  /** Header lines in the order sent, `Date` left out (it changes every second). */
  headers: string[];
  /** The body, de-chunked when it was sent chunked. */
  body: string;
  /** The body was whole by its framing: the last chunk of a chunked body, or Content-Length bytes. */
  complete: boolean;
  /** What was wrong with the chunked framing (a chunk whose data is not followed by CRLF), if anything. */
  framingError: string | undefined;
  /** The server closed the connection (end of stream from its side). */
  closed: boolean;
}

export interface RawOptions {
  /** Take the answer at about this rate (pausing after each read), instead of as fast as it comes. */
  readBytesPerSecond?: number;
  /** Stop reading once this many bytes have arrived, until resume(). */
  stallAfterBytes?: number;
  /** Give up (destroying the socket) after this long: the reply so far, closed false. */
  timeoutMs?: number;
}

export interface RawExchange {
  /** Settles once the server closed the connection, or at the timeout. */
  readonly done: Promise<RawReply>;
  /** Bytes received so far. */
  received(): number;
  /** Resolves once at least `bytes` have arrived. */
  until(bytes: number): Promise<void>;
  /** Reads again, at full speed, after a stall or a rate. */
  resume(): void;
  /** Reads again after a stall, at about this rate. */
  readAt(bytesPerSecond: number): void;
}

/** Sends `request` as it is (CRLFs and all) to 127.0.0.1:`port` and reads the answer as `opts` says. */
export function rawRequest(port: number, request: string, opts: RawOptions = {}): RawExchange {
  const sock = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let bytes = 0;
  let limited = true;
  let stalled = false;
  let rate = opts.readBytesPerSecond;
  let stallAfter = opts.stallAfterBytes;
  const watchers: { bytes: number; resolve: () => void }[] = [];
  const done = new Promise<RawReply>((resolve, reject) => {
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(parseReply(Buffer.concat(chunks).toString('latin1'), closed));
    };
    const timer = setTimeout(finish, opts.timeoutMs ?? 60_000);
    sock.once('connect', () => sock.write(request, 'latin1'));
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      bytes += d.length;
      for (const w of watchers.filter((x) => bytes >= x.bytes)) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve();
      }
      if (!limited) return;
      if (stallAfter !== undefined && bytes >= stallAfter) {
        stalled = true;
        sock.pause();
      } else if (rate !== undefined) {
        sock.pause();
        setTimeout(() => {
          if (!stalled) sock.resume();
        }, (d.length / rate) * 1000);
      }
    });
    sock.once('end', () => {
      closed = true;
      finish();
    });
    sock.once('error', (err) => (bytes > 0 ? finish() : reject(err)));
  });
  return {
    done,
    received: () => bytes,
    until: (n) => (bytes >= n ? Promise.resolve() : new Promise((resolve) => watchers.push({ bytes: n, resolve }))),
    resume: () => {
      limited = false;
      stalled = false;
      sock.resume();
    },
    readAt: (bytesPerSecond) => {
      rate = bytesPerSecond;
      stallAfter = undefined;
      stalled = false;
      sock.resume();
    },
  };
}

/** Splits a response into its status line, headers and body (de-chunked). */
export function parseReply(raw: string, closed: boolean): RawReply {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = (headEnd < 0 ? raw : raw.slice(0, headEnd)).split('\r\n');
  const rest = headEnd < 0 ? '' : raw.slice(headEnd + 4);
  const headers = head.slice(1).filter((h) => !/^date:/i.test(h));
  const value = (name: string) => headers.find((h) => h.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
  let body = rest;
  let complete = headEnd >= 0;
  let framingError: string | undefined;
  if (value('transfer-encoding') === 'chunked') {
    body = '';
    complete = false;
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) break;
      const size = parseInt(rest.slice(at, eol), 16);
      if (Number.isNaN(size) || !/^[0-9a-f]+$/i.test(rest.slice(at, eol))) {
        framingError = `bad chunk size line at body byte ${at}: ${JSON.stringify(rest.slice(at, at + 40))}`;
        break;
      }
      if (rest.length < eol + 2 + size + 2) {
        body += rest.slice(eol + 2, eol + 2 + size);
        break;
      }
      if (size === 0) {
        complete = true;
        break;
      }
      if (rest.slice(eol + 2 + size, eol + 4 + size) !== '\r\n') {
        framingError = `chunk of ${size} bytes at body byte ${at} not followed by CRLF: ${JSON.stringify(rest.slice(eol + 2 + size, eol + 42 + size))}`;
        break;
      }
      body += rest.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
  } else if (value('content-length') !== undefined) {
    complete = rest.length >= Number(value('content-length'));
  }
  return { raw, statusLine: head[0] ?? '', headers, body: Buffer.from(body, 'latin1').toString('utf8'), complete, framingError, closed };
}
