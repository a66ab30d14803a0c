/**
 * The daemon's certificate as the built daemon makes it (dist/): made on first use by
 * certificate-maker in a process of its own, then reused, and read back with the names it was
 * made with (an IPv6 address included, which node spells out in full).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type * as Certificate from '../../src/auth/certificate.js';

type CertificateModule = typeof Certificate;
const ROOT = join(import.meta.dirname, '../..');
const built = async (): Promise<CertificateModule> =>
  (await import(pathToFileURL(join(ROOT, 'dist/auth/certificate.js')).href)) as CertificateModule;

describe('the daemon certificate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-cert-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tlsDir = join(dir, 'tls');

  it('is made once, with its key private, naming loopback and the hosts given', { timeout: 120_000 }, async () => {
    const { ensureCertificate } = await built();
    const made = await ensureCertificate(tlsDir, ['192.0.2.7', 'box.example']);
    expect(made.created).toBe(true);
    expect(made.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(made.names).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', '::1', '192.0.2.7', 'box.example']));
    expect(made.missing).toEqual([]);
    expect(statSync(join(tlsDir, 'key.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(tlsDir).mode & 0o777).toBe(0o700);

    const again = await ensureCertificate(tlsDir, ['192.0.2.7', 'box.example']);
    expect(again.created).toBe(false);
    expect(again.fingerprint).toBe(made.fingerprint);
    // Every name it was made with reads back as written: nothing reported missing at a restart.
    expect(again.missing).toEqual([]);
    expect((await ensureCertificate(tlsDir, ['other.example'])).missing).toEqual(['other.example']);
  });
});
