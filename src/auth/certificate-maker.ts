/**
 * Makes the daemon's first TLS certificate, in a process of its own (certificate.ts starts it).
 * The generator and RSA key generation load a library and node's web crypto that the daemon
 * never needs again; in the daemon they stayed resident for its whole life (~3 MB,
 * docs/benchmarks.md "Memory"). Here they end with the process.
 *
 * Usage: `node certificate-maker.js <tls-dir> <names as a JSON array>`. Writes the key, then
 * the certificate (both atomically, 0600). On failure it exits 1 with one JSON line on stderr,
 * `{"code": ..., "message": ...}`, which the daemon raises as that DomainError.
 */
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { DomainError, storeFailure } from '../errors.js';
import { writeAtomic } from '../files.js';
import { CERT_FILE, CERT_VALID_DAYS, KEY_FILE } from './certificate.js';

async function make(tlsDir: string, names: readonly string[]): Promise<void> {
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: `tether on ${hostname()}` }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + CERT_VALID_DAYS * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names.map((n) => (isIP(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n })) },
    ],
  });
  // The key first: a crash between the two writes leaves a key without a certificate, which the
  // next start reports, never a certificate whose key is lost.
  writeAtomic(join(tlsDir, KEY_FILE), pems.private, storeFailure);
  writeAtomic(join(tlsDir, CERT_FILE), pems.cert, storeFailure);
}

const [tlsDir, namesJson] = process.argv.slice(2);
try {
  if (tlsDir === undefined || namesJson === undefined) throw new Error('usage: certificate-maker <tls-dir> <names as JSON>');
  await make(tlsDir, JSON.parse(namesJson) as string[]);
} catch (err) {
  const code = err instanceof DomainError ? err.code : 'certificate-unusable';
  process.stderr.write(`${JSON.stringify({ code, message: `the TLS certificate cannot be made: ${(err as Error).message}` })}\n`);
  process.exitCode = 1;
}
