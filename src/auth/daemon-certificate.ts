/**
 * The daemon's TLS certificate at its start (docs/pairing.md): read when `tls` is on, or on a first
 * start made in memory, and written only once the port is held (a refused daemon changes no file).
 *
 * Invariant: a certificate that does not name every host is kept (paired phones pin its
 * fingerprint), with a warning; one that cannot be read or made is the start's refusal.
 */
import type { TetherConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { findOrMakeCertificate, type FoundCertificate } from './certificate.js';

/**
 * The certificate: read, or on first start made in memory (written by `keepCertificate` once the
 * port is held); problems become the one-line refusal.
 */
export async function loadCertificate(tlsDir: string, host: string, publicBaseUrl: string, log: Logger): Promise<FoundCertificate> {
  const hosts = [host, ...(publicBaseUrl !== '' ? [new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '')] : [])];
  const cert = await findOrMakeCertificate(tlsDir, hosts);
  if (cert.missing.length > 0)
    log.warn({ missing: cert.missing }, 'the TLS certificate does not name every host; paired phones pin its fingerprint, so it is kept');
  return cert;
}

/** Writes the certificate this start made (nothing for one it read); problems become the one-line refusal. */
export function keepCertificate(cert: FoundCertificate | null, log: Logger): void {
  if (!cert?.save) return;
  cert.save();
  log.info({ fingerprint: cert.fingerprint, names: cert.names }, 'made a new TLS certificate: phones pin its fingerprint');
}

/** `https` with a certificate, else `http`. */
export function schemeOf(cert: FoundCertificate | null): 'http' | 'https' {
  return cert ? 'https' : 'http';
}

/** The certificate when `tls` is on (made in memory on a first start: `keepCertificate` writes it once the port is held), else null. */
export async function certificateIfOn(config: TetherConfig, tlsDir: string, host: string, log: Logger): Promise<FoundCertificate | null> {
  return config.tls ? await loadCertificate(tlsDir, host, config.publicBaseUrl, log) : null;
}
