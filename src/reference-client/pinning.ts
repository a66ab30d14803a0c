/**
 * Certificate pinning as a tether client does it (docs/pairing.md: the client pins the
 * certificate fingerprint from the pairing QR and verifies every later connection against it;
 * no certificate authority is involved).
 *
 * How, without sending a secret to the wrong server: a first TLS connection sends nothing, reads
 * the server's certificate and compares the SHA-256 of its DER with the pin; only a match is
 * kept. Every real connection (the pairing request, REST, the stream) then trusts exactly that
 * certificate (`ca`) and checks the fingerprint again in `checkServerIdentity`, both during the
 * handshake, so a different certificate fails the handshake before any request byte is sent.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { connect } from 'node:tls';

/** TLS options for `https.request`, `tls.connect` or the `ws` client. */
export interface PinnedTlsOptions {
  readonly ca: string;
  readonly checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined;
}

/**
 * The server's certificate is not the pinned one. A client-side failure, not one of the daemon's:
 * kept apart from DomainError because it carries both fingerprints for the app to show.
 */
export class PinMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      `the server's certificate (SHA-256 ${actual}) is not the one paired with (${expected}): pair again if the certificate really changed`,
    );
    this.name = 'PinMismatchError';
  }
}

const sha256Hex = (der: Buffer): string => createHash('sha256').update(der).digest('hex');

/** Normalizes a fingerprint: lowercase hex, colons allowed in the input. */
export function normalizeFingerprint(fp: string): string {
  const hex = fp.replace(/:/g, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`a SHA-256 fingerprint has 64 hex digits, not "${fp}"`);
  return hex;
}

/** The options that make a connection trust exactly the pinned certificate. */
export function pinnedOptions(certPem: string, fingerprint: string): PinnedTlsOptions {
  const pin = normalizeFingerprint(fingerprint);
  return {
    ca: certPem,
    checkServerIdentity: (_host, cert) => {
      const actual = sha256Hex(cert.raw);
      return actual === pin ? undefined : new PinMismatchError(pin, actual);
    },
  };
}

/**
 * Fetches the server's certificate over a connection that sends no data, checks it against
 * the pin, and returns the options for the real connections. Rejects with `PinMismatchError`.
 */
export function pinnedTlsOptions(host: string, port: number, fingerprint: string, timeoutMs = 10_000): Promise<PinnedTlsOptions> {
  const pin = normalizeFingerprint(fingerprint);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }) });
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS handshake with ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      const actual = sha256Hex(raw);
      if (actual !== pin) {
        reject(new PinMismatchError(pin, actual));
        return;
      }
      resolve(pinnedOptions(new X509Certificate(raw).toString(), pin));
    });
  });
}
