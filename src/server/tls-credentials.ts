// The front end's TLS certificate and key (serve --tls-cert/--tls-key):
// checked before anything else starts, then read once.
//
// uWebSockets.js reads the two files itself, into the BoringSSL linked into
// its binary, and when it cannot it says only "App construction failed".
// So Node's crypto reads them first, and a bad pair stops the start with one
// line naming the flag, the file and the reason (serve prints it and exits
// 2): never a crash, never a server on plain HTTP. A pair that OpenSSL takes
// and BoringSSL does not (an Ed448 or brainpool key) is refused by uWS's own
// answer, in the same kind of line.
//
// The pair is read when the process starts and never again: replacing the
// files on disk changes nothing until a restart (README "Operating it",
// TLS). uWS 20.30 offers no safe way to change the certificate of a running
// app, measured here:
//  - the default context, which every client without SNI gets (any client of
//    https://127.0.0.1), cannot be given another certificate: it is a
//    BoringSSL SSL_CTX inside the uWS binary, whose symbols are not exported;
//  - addServerName() adds a context for one SNI name only, with a router of
//    its own to fill, and removeServerName() frees that router while
//    kept-alive connections still route through it: the next request on such
//    a connection crashed the process (SIGSEGV);
//  - a second SSLApp listening on the same port (SO_REUSEPORT), then closing
//    the first listener, keeps open connections on the old certificate and
//    gives new ones the new, but fails for --port 0 (uWS sets SO_REUSEPORT
//    only for a non-zero port), and the close resets the connections the
//    kernel had queued on the old listener: 2 to 4 per 100 swaps with 8
//    clients connecting in a loop, none with net.ipv4.tcp_migrate_req=1.

import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { hasCode, TlsPairError } from '../errors/catalogue.js';
import { log } from './log.js';
import { uws, type TemplatedApp } from '../lib/uws.js';

/** OpenSSL's reason for a failure ("key values mismatch"), else the error's message. */
function reasonOf(err: unknown): string {
  const e = err as { reason?: unknown; message?: unknown };
  return typeof e.reason === 'string' ? e.reason : String(e.message ?? err);
}

function readPem(flag: string, file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch (err) {
    const why = hasCode(err, 'ENOENT') ? 'no such file' : hasCode(err, 'EACCES') ? 'permission denied'
      : hasCode(err, 'EISDIR') ? 'is a directory' : reasonOf(err);
    throw new TlsPairError(`${flag} ${file}: ${why}`, err);
  }
}

function certificateOf(file: string, pem: string): X509Certificate {
  // X509Certificate would also take DER; uWS reads PEM only.
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new TlsPairError(`--tls-cert ${file}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)`);
  }
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new TlsPairError(`--tls-cert ${file}: not a readable certificate (${reasonOf(err)})`, err);
  }
}

function privateKeyOf(file: string, pem: string): KeyObject {
  const encrypted = 'the key is encrypted; serve takes an unencrypted key (openssl pkey -in KEY -out PLAIN_KEY)';
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new TlsPairError(`--tls-key ${file}: no PEM private key in it (-----BEGIN PRIVATE KEY-----)`);
  }
  if (pem.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----') || pem.includes('Proc-Type: 4,ENCRYPTED')) {
    throw new TlsPairError(`--tls-key ${file}: ${encrypted}`);
  }
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new TlsPairError(`--tls-key ${file}: not a readable private key (${reasonOf(err)})`, err);
  }
}

/**
 * The uWS SSLApp serving `certFile` with `keyFile`, once both files hold
 * PEM, the key is the certificate's and both TLS libraries accept them;
 * else a TlsPairError saying which file is wrong and why. Logs the
 * certificate it serves (and warns when it has expired: clients refuse it,
 * but the operator may be about to replace it, so it is served).
 */
export function openTlsApp(certFile: string, keyFile: string): TemplatedApp {
  const certPem = readPem('--tls-cert', certFile);
  const keyPem = readPem('--tls-key', keyFile);
  const cert = certificateOf(certFile, certPem);
  const key = privateKeyOf(keyFile, keyPem);
  if (!cert.checkPrivateKey(key)) {
    throw new TlsPairError(`--tls-key ${keyFile} is not the private key of --tls-cert ${certFile} (their public keys differ)`);
  }
  try {
    createSecureContext({ cert: certPem, key: keyPem });
  } catch (err) {
    throw new TlsPairError(`--tls-cert ${certFile} with --tls-key ${keyFile}: OpenSSL refused them (${reasonOf(err)})`, err);
  }
  let app: TemplatedApp;
  try {
    app = uws.SSLApp({ cert_file_name: certFile, key_file_name: keyFile });
  } catch (err) {
    throw new TlsPairError(`--tls-cert ${certFile} with --tls-key ${keyFile}: uWebSockets.js (BoringSSL) refused them ` +
      '(it takes RSA, ECDSA P-256, P-384 or P-521, and Ed25519 keys)', err);
  }
  const about = {
    certFile, subject: cert.subject.replace(/\n/g, ', '), subjectAltName: cert.subjectAltName, issuer: cert.issuer.replace(/\n/g, ', '),
    validTo: cert.validTo, fingerprint256: cert.fingerprint256,
  };
  if (Date.parse(cert.validTo) <= Date.now()) log.warn(about, 'the TLS certificate has expired: clients will refuse it');
  else log.info(about, 'TLS certificate loaded');
  return app;
}
