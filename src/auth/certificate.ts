/**
 * The daemon's TLS certificate (docs/pairing.md): self-signed, RSA-2048 with
 * a SHA-256 signature (iOS does not accept Ed25519 in TLS), valid 10 years, SANs for
 * localhost, 127.0.0.1, ::1, the host name and the bind/public host. Made on first start in
 * `{data_dir}/tls/` and kept: the phone pins its fingerprint (SHA-256 of the DER, 64 lowercase
 * hex digits), so a new certificate means pairing again. It is made by certificate-maker.ts in a
 * process of its own, so the generator never loads into the daemon.
 *
 * Invariants: the key file is 0600 in a 0700 directory and written before the certificate
 * (both atomically), so a crash never leaves a certificate without its key; an existing pair is
 * reused as long as it parses and the key matches the certificate; one that does not is an
 * error that says what to do, never silently replaced (that would break every pairing). A new
 * pair is made in memory and written by its `save`, which the daemon calls once it holds its
 * port: a refused start writes no certificate. Reading an existing pair changes nothing (modes
 * are set only when they are wrong).
 */
import { spawn } from 'node:child_process';
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError, storeFailure, type ErrorCode } from '../errors.js';
import { writeAtomic } from '../files.js';
import { TLS_DIR_NAMES } from '../config/data-layout.js';

/** Validity of a new certificate. */
export const CERT_VALID_DAYS = 3650;
export const CERT_FILE = TLS_DIR_NAMES.cert;
export const KEY_FILE = TLS_DIR_NAMES.key;

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

/**
 * The names a certificate carries, as certificateNames writes them: node spells an IPv6 address
 * in full (`0:0:0:0:0:0:0:1`), written as `::1`; the URL parser gives its short form back.
 */
function namesOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .map((s) => s.replace(/^(DNS|IP Address):/, ''))
    .map((n) => (n.includes(':') ? new URL(`http://[${n}]/`).hostname.slice(1, -1) : n))
    .filter((s) => s !== '');
}

/** Sets `path`'s mode when it is not `mode` already (a start that finds it right changes nothing). */
function keepMode(path: string, mode: number): void {
  if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
}

/** A certificate read or made, with the hosts it does not name; a new one is kept by `save`. */
export type FoundCertificate = DaemonCertificate & {
  readonly missing: string[];
  /** For a pair made by this call: writes it in `tlsDir` (the key first); null for one read from there. */
  readonly save: (() => void) | null;
};

/**
 * The certificate in `tlsDir`, or a new one made in memory when there is none (written by its
 * `save`). `hosts` are the bind and public hosts; an existing certificate that lacks one is still
 * used (the phone pins the fingerprint, not the name) and the missing names are returned for a
 * log line.
 */
export async function findOrMakeCertificate(tlsDir: string, hosts: readonly string[]): Promise<FoundCertificate> {
  const certPath = join(tlsDir, CERT_FILE);
  const keyPath = join(tlsDir, KEY_FILE);
  const wanted = certificateNames(hosts);
  if (existsSync(certPath) || existsSync(keyPath)) {
    try {
      keepMode(tlsDir, 0o700);
    } catch (err) {
      throw unusable(`${tlsDir} cannot be made private: ${(err as Error).message}`);
    }
    const loaded = loadCertificate(certPath, keyPath);
    const have = new Set(loaded.names);
    return { ...loaded, missing: wanted.filter((n) => !have.has(n)), save: null };
  }
  const { key, cert } = await runMaker(wanted);
  const made = readCertificate(cert, key, (why) => `the new TLS certificate is not usable (${why})`);
  const save = () => {
    try {
      mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
      chmodSync(tlsDir, 0o700);
      // The key first: a crash between the two writes leaves a key without a certificate, which
      // the next start reports, never a certificate whose key is lost.
      writeAtomic(keyPath, key, storeFailure);
      writeAtomic(certPath, cert, storeFailure);
    } catch (err) {
      throw unusable(`the TLS certificate cannot be written in ${tlsDir}: ${(err as Error).message}`);
    }
  };
  return { ...made, created: true, missing: [], save };
}

/** The certificate in `tlsDir`, made and written there first when there is none. */
export async function ensureCertificate(tlsDir: string, hosts: readonly string[]): Promise<DaemonCertificate & { missing: string[] }> {
  const { save, ...found } = await findOrMakeCertificate(tlsDir, hosts);
  save?.();
  return found;
}

/**
 * Where certificate-maker is: beside this module in dist/ (`../auth/` also from the bundle's
 * dist/cli/), or its TypeScript source when tether runs from source (then with this process's
 * loader flags).
 */
function maker(): { path: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    path: fileURLToPath(new URL(`../auth/certificate-maker.${fromSource ? 'ts' : 'js'}`, import.meta.url)),
    execArgv: fromSource ? process.execArgv : [],
  };
}

/** Runs certificate-maker; resolves with the pair it printed. Its one-line failure becomes the DomainError it names. */
async function runMaker(names: readonly string[]): Promise<{ key: string; cert: string }> {
  const { path, execArgv } = maker();
  const child = spawn(process.execPath, [...execArgv, path, JSON.stringify(names)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4096)));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code === 0) {
    try {
      const pair = JSON.parse(stdout) as { key?: unknown; cert?: unknown };
      if (typeof pair.key === 'string' && typeof pair.cert === 'string') return { key: pair.key, cert: pair.cert };
    } catch {
      // Told below.
    }
    throw unusable('the TLS certificate cannot be made: its maker printed no certificate');
  }
  let failure: { code?: ErrorCode; message?: string } = {};
  try {
    failure = JSON.parse(stderr.trim().split('\n').pop() ?? '') as typeof failure;
  } catch {
    // Not its own line: the process died some other way; its output says how.
  }
  const how = signal !== null ? `was ended by ${signal}` : `exited with ${code}`;
  throw new DomainError(
    failure.code ?? 'certificate-unusable',
    failure.message ?? `the TLS certificate cannot be made: its maker ${how}: ${stderr.trim()}`,
  );
}

/** Checks a pair: the certificate parses and the key is its own; any problem is `certificate-unusable`. */
function readCertificate(cert: string, key: string, problem: (why: string) => string): DaemonCertificate {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('the key does not belong to the certificate');
  } catch (err) {
    throw unusable(problem((err as Error).message));
  }
  return { cert, key, fingerprint: fingerprintOf(cert), created: false, names: namesOf(x509) };
}

/** Reads and checks an existing pair; any problem is `certificate-unusable`, saying what to do. */
export function loadCertificate(certPath: string, keyPath: string): DaemonCertificate {
  const redo = `remove ${certPath} and ${keyPath} to make a new certificate (phones must then pair again)`;
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certPath, 'utf8');
    key = readFileSync(keyPath, 'utf8');
    keepMode(keyPath, 0o600);
  } catch (err) {
    throw unusable(`the TLS certificate cannot be read (${(err as Error).message}); ${redo}`);
  }
  return readCertificate(cert, key, (why) => `the TLS certificate in ${certPath} is not usable (${why}); ${redo}`);
}
