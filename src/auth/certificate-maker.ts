/**
 * Makes the daemon's first TLS certificate, in a process of its own (certificate.ts starts it).
 * The generator and RSA key generation load a library and node's web crypto that the daemon
 * never needs again; in the daemon they stayed resident for its whole life (~3 MB,
 * docs/benchmarks.md "Memory"). Here they end with the process.
 *
 * Usage: `node certificate-maker.js <names as a JSON array>`. Prints one JSON line on stdout,
 * `{"key": <PEM>, "cert": <PEM>}`, and writes nothing: the daemon keeps the pair once it holds
 * its port (certificate.ts), so a start that is refused leaves no certificate behind. On failure
 * it exits 1 with one JSON line on stderr, `{"code": ..., "message": ...}`, which the daemon
 * raises as that DomainError.
 */
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { DomainError } from '../errors.js';
import { CERT_VALID_DAYS } from './certificate.js';

async function make(names: readonly string[]): Promise<{ key: string; cert: string }> {
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
  return { key: pems.private, cert: pems.cert };
}

const [namesJson] = process.argv.slice(2);
try {
  if (namesJson === undefined) throw new Error('usage: certificate-maker <names as JSON>');
  process.stdout.write(`${JSON.stringify(await make(JSON.parse(namesJson) as string[]))}\n`);
} catch (err) {
  const code = err instanceof DomainError ? err.code : 'certificate-unusable';
  process.stderr.write(`${JSON.stringify({ code, message: `the TLS certificate cannot be made: ${(err as Error).message}` })}\n`);
  process.exitCode = 1;
}
