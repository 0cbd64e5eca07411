// TLS for the integration tests: a private CA and server certificates made
// with Debian's `openssl` command in a scratch directory, and an HTTPS
// client that verifies the server against that CA and names it (IP address
// or DNS name) as a partner's client would. Nothing here turns
// verification off: a test that wants a refused handshake gives the client
// a CA that did not sign the server's certificate, or a name it does not
// carry.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { Reply } from './rrscan.js';

export const HAVE_OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
export const OPENSSL_SKIP_REASON = 'the openssl command is not installed (Debian package openssl); the TLS tests skip';

/** A certificate and its key, as files. */
export interface Pair {
  cert: string;
  key: string;
}

export interface TestPki {
  /** The CA's certificate (PEM text) that clients trust. */
  ca: string;
  /** Two server pairs signed by the CA, for 127.0.0.1 and localhost; `a` and `b` have different keys. */
  a: Pair;
  b: Pair;
  /** The certificate (PEM text) of a CA that signed neither server pair. */
  otherCa: string;
  /** `a`'s key encrypted with a passphrase. */
  encryptedKey: string;
  /** An Ed448 pair: OpenSSL takes it, uWebSockets.js's BoringSSL does not. */
  ed448: Pair;
}

function openssl(args: string[], input?: string): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8', input });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

const SERVER_EXTENSIONS = [
  'subjectAltName=IP:127.0.0.1,DNS:localhost', 'basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature',
  'extendedKeyUsage=serverAuth',
].join('\n') + '\n';

/** A self-signed CA (P-256) in `dir`: its certificate and key files. */
function makeCa(dir: string, name: string): Pair {
  const ca = { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', ca.key, '-out', ca.cert,
    '-days', '2', '-subj', `/CN=rrscan test ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign']);
  return ca;
}

/** A server certificate for 127.0.0.1 and localhost, with a new key of `algorithm`, signed by `ca`. */
function makeServerPair(dir: string, name: string, ca: Pair, serial: number,
  algorithm = ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256']): Pair {
  const pair = { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, 'server.ext');
  writeFileSync(ext, SERVER_EXTENSIONS);
  openssl(['req', '-new', '-newkey', ...algorithm, '-nodes', '-keyout', pair.key, '-out', csr, '-subj', `/CN=rrscan test ${name}`]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', String(serial), '-days', '2',
    '-extfile', ext, '-out', pair.cert]);
  return pair;
}

/** Every certificate and key the TLS tests use, made in `dir` (about half a second of openssl). */
export function makeTestPki(dir: string): TestPki {
  const ca = makeCa(dir, 'ca');
  const other = makeCa(dir, 'other-ca');
  const encryptedKey = path.join(dir, 'a-encrypted.key');
  const a = makeServerPair(dir, 'server-a', ca, 1);
  openssl(['pkey', '-in', a.key, '-aes256', '-passout', 'pass:rrscan', '-out', encryptedKey]);
  return {
    ca: readFileSync(ca.cert, 'utf8'), a, b: makeServerPair(dir, 'server-b', ca, 2),
    otherCa: readFileSync(other.cert, 'utf8'), encryptedKey, ed448: makeServerPair(dir, 'server-ed448', ca, 3, ['ed448']),
  };
}

/** SHA-256 fingerprint of a PEM certificate file, as Node's getPeerCertificate() spells it (AA:BB:...). */
export function fingerprint(certFile: string): string {
  return openssl(['x509', '-in', certFile, '-noout', '-fingerprint', '-sha256']).trim().replace(/^.*=/, '');
}

export interface TlsReply extends Reply {
  /** Fingerprint of the certificate the server presented on this connection. */
  fingerprint: string;
  /** The request went on a connection an earlier request had opened (HTTP keep-alive). */
  reused: boolean;
}

export interface TlsClient {
  /** The CA the client trusts (PEM). */
  ca: string;
  /** The name the client asks for (SNI) and checks the certificate against; default: the IP address, sent without SNI. */
  servername?: string;
  /** A keep-alive agent made with the same `ca`, to send several requests on one connection. */
  agent?: https.Agent;
  /** Read as a client slower than the server does: stop reading for a moment after every 64 KB, so that the server's writes push back. */
  slowReader?: boolean;
}

const SLOW_READER_BYTES = 64 << 10;
const SLOW_READER_PAUSE_MS = 5;

/** A keep-alive agent of one connection, trusting `ca`. */
export function keepAliveAgent(ca: string): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets: 1, ca });
}

/** GET over HTTPS to 127.0.0.1:`port`, verifying the server; rejects with the client's error (a refused handshake among them). */
export function httpsGet(port: number, pathAndQuery: string, client: TlsClient, headers: Record<string, string> = {}): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path: pathAndQuery, headers, ca: client.ca, agent: client.agent ?? false,
      ...(client.servername !== undefined ? { servername: client.servername } : {}),
    }, (res) => {
      const fp = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      let sincePause = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        sincePause += c.length;
        if (client.slowReader !== true || sincePause < SLOW_READER_BYTES) return;
        sincePause = 0;
        res.pause();
        setTimeout(() => res.resume(), SLOW_READER_PAUSE_MS);
      });
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), fingerprint: fp,
        reused: req.reusedSocket,
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
