/**
 * The daemon's TLS certificate (docs/pairing.md): self-signed, RSA-2048 with
 * a SHA-256 signature (iOS does not accept Ed25519 in TLS), valid 10 years, SANs for
 * localhost, 127.0.0.1, ::1, the host name and the bind/public host. Made on first start in
 * `{data_dir}/tls/` and kept: the phone pins its fingerprint (SHA-256 of the DER, 64 lowercase
 * hex digits), so a new certificate means pairing again.
 *
 * Invariants: the key file is 0600 in a 0700 directory and written before the certificate
 * (both atomically), so a crash never leaves a certificate without its key; an existing pair is
 * reused as long as it parses and the key matches the certificate; one that does not is an
 * error that says what to do, never silently replaced (that would break every pairing).
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { DomainError, storeFailure } from '../errors.js';
import { writeAtomic } from '../files.js';

/** Validity of a new certificate. */
export const CERT_VALID_DAYS = 3650;
export const CERT_FILE = 'cert.pem';
export const KEY_FILE = 'key.pem';

/** The certificate cannot be made or read: `certificate-unusable`, saying what to do. */
const unusable = (message: string): DomainError => new DomainError('certificate-unusable', message);

export interface DaemonCertificate {
  readonly cert: string;
  readonly key: string;
  /** SHA-256 of the certificate's DER, 64 lowercase hex digits (what the QR carries). */
  readonly fingerprint: string;
  /** True when it was made by this call (first start). */
  readonly created: boolean;
  /** Host names and addresses the certificate names. */
  readonly names: readonly string[];
}

/** SHA-256 of a PEM certificate's DER, lowercase hex. */
export function fingerprintOf(certPem: string): string {
  return createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex');
}

/** The names a new certificate carries: the fixed loopback names plus the given hosts. */
export function certificateNames(hosts: readonly string[]): string[] {
  const names = ['localhost', '127.0.0.1', '::1', hostname(), ...hosts];
  // Wildcard binds are not names anyone connects to.
  return [...new Set(names.filter((n) => n !== '' && n !== '0.0.0.0' && n !== '::'))];
}

function namesOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .map((s) => s.replace(/^(DNS|IP Address):/, ''))
    .filter((s) => s !== '');
}

/**
 * The certificate in `tlsDir`, made there first when there is none. `hosts` are the bind and
 * public hosts; an existing certificate that lacks one is still used (the phone pins the
 * fingerprint, not the name) and the missing names are returned for a log line.
 */
export async function ensureCertificate(tlsDir: string, hosts: readonly string[]): Promise<DaemonCertificate & { missing: string[] }> {
  const certPath = join(tlsDir, CERT_FILE);
  const keyPath = join(tlsDir, KEY_FILE);
  try {
    mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
    chmodSync(tlsDir, 0o700);
  } catch (err) {
    throw unusable(`${tlsDir} cannot be created: ${(err as Error).message}`);
  }
  const wanted = certificateNames(hosts);
  if (existsSync(certPath) || existsSync(keyPath)) {
    const loaded = loadCertificate(certPath, keyPath);
    const have = new Set(loaded.names);
    return { ...loaded, missing: wanted.filter((n) => !have.has(n)) };
  }
  // Loaded only here: making a certificate is a first-start job, and the library is not small.
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
      { name: 'subjectAltName', altNames: wanted.map((n) => (isIP(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n })) },
    ],
  });
  // The key first: a crash between the two writes leaves a key without a certificate, which the
  // next start reports, never a certificate whose key is lost.
  writeAtomic(keyPath, pems.private, storeFailure);
  writeAtomic(certPath, pems.cert, storeFailure);
  return { cert: pems.cert, key: pems.private, fingerprint: fingerprintOf(pems.cert), created: true, names: wanted, missing: [] };
}

/** Reads and checks an existing pair; any problem is `certificate-unusable`, saying what to do. */
export function loadCertificate(certPath: string, keyPath: string): DaemonCertificate {
  const redo = `remove ${certPath} and ${keyPath} to make a new certificate (phones must then pair again)`;
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certPath, 'utf8');
    key = readFileSync(keyPath, 'utf8');
    chmodSync(keyPath, 0o600);
  } catch (err) {
    throw unusable(`the TLS certificate cannot be read (${(err as Error).message}); ${redo}`);
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('the key does not belong to the certificate');
  } catch (err) {
    throw unusable(`the TLS certificate in ${certPath} is not usable (${(err as Error).message}); ${redo}`);
  }
  return { cert, key, fingerprint: fingerprintOf(cert), created: false, names: namesOf(x509) };
}
