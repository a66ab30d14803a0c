/**
 * Pairing, tokens and TLS as a user meets them: `tether serve` with TLS on (its own certificate),
 * `tether pair` read from the terminal (the QR code decoded as a camera would, on a dark and a
 * light theme), a phone-like client that pins the fingerprint from the QR, `POST /pair`, wss
 * with the paired token, and `tether auth` revoking it while its stream is open.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PairingStore } from '../../src/auth/pairing-store.js';
import { pinnedOptions, pinnedTlsOptions, PinMismatchError, type PinnedTlsOptions } from '../../src/reference-client/pinning.js';
import { runCli } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pinnedRequest, type PinnedResponse } from '../helpers/https.js';
import { decodeTerminalQr } from '../helpers/qr-decode.js';
import { eventually } from '../helpers/tmux.js';

const CONFIG = `tls = true\nname = "devbox"\n[agent]\ncommand = "/bin/cat"\ndefault_session = "pi-main"\n`;

interface PairingJson {
  url: string;
  pairingToken: string;
  host: string;
  port: number;
  fingerprint: string;
  name: string;
  id: string;
  warnings: string[];
}

describe('pairing, tokens and TLS', () => {
  // Making the certificate (RSA 2048) is slow on busy cores.
  const fx = useDaemon(CONFIG, { startTimeoutMs: 60_000, setupTimeoutMs: 90_000 });
  let host: string;
  let port: number;
  /** Trusts the daemon's certificate after checking the pin from the first QR. */
  let tls: PinnedTlsOptions;

  beforeAll(() => {
    host = fx.d.url.hostname;
    port = Number(fx.d.url.port);
  });

  const cli = (...args: string[]) => runCli(args, fx.home.env);
  const pairJson = async (): Promise<PairingJson> => {
    const r = await cli('pair', '--json');
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as PairingJson;
  };
  const request = (path: string, init: Parameters<typeof pinnedRequest>[4] = {}): Promise<PinnedResponse> =>
    pinnedRequest(host, port, path, tls, init);
  const certPem = () => readFileSync(join(fx.home.dataDir, 'tls/cert.pem'), 'utf8');

  it('serves https with its own certificate, and the startup URL says so', () => {
    expect(fx.d.url.protocol).toBe('https:');
    const cert = new X509Certificate(certPem());
    expect(cert.publicKey.asymmetricKeyType).toBe('rsa');
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365 * 86_400_000);
    expect(years).toBeGreaterThan(9.9);
  });

  it('prints a QR code that reads the same on dark and light terminals, with the URL under it', async () => {
    const r = await cli('pair');
    expect(r.code, r.stderr).toBe(0);
    const url = /^tether:\/\/\S+$/m.exec(r.stdout)?.[0];
    expect(url).toBeDefined();
    expect(decodeTerminalQr(r.stdout, 'dark')).toBe(url);
    expect(decodeTerminalQr(r.stdout, 'light')).toBe(url);
    const u = new URL(url!.replace(/^tether:/, 'https:'));
    expect(`${u.hostname}:${u.port}`).toBe(`${host}:${port}`);
    expect(u.searchParams.get('pair')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const fp = createHash('sha256').update(new X509Certificate(certPem()).raw).digest('hex');
    expect(u.searchParams.get('fp')).toBe(fp);
    expect(u.searchParams.get('name')).toBe('devbox');
    // The daemon's id, as kept in the data dir (0600) and as the run file has it.
    const kept = JSON.parse(readFileSync(join(fx.home.dataDir, 'identity.json'), 'utf8')) as { id: string };
    expect(statSync(join(fx.home.dataDir, 'identity.json')).mode & 0o777).toBe(0o600);
    expect(u.searchParams.get('id')).toBe(kept.id);
    expect(kept.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.parse(readFileSync(join(fx.home.dataDir, 'run/daemon.json'), 'utf8'))).toMatchObject({ id: kept.id, name: 'devbox' });
    // Bound to loopback with no publicBaseUrl: the user is told a phone cannot reach it.
    expect(r.stderr).toMatch(/cannot reach it.*publicBaseUrl/);
  });

  it('pairs: the pin from the QR matches, POST /pair gives a token, and wss works with it', async () => {
    const p = await pairJson();
    tls = await pinnedTlsOptions(p.host, p.port, p.fingerprint);
    const health = await request('/health', { token: fx.d.token });
    expect(health.status).toBe(200);
    expect(health.json<{ tls: { fingerprint: string } }>().tls.fingerprint).toBe(p.fingerprint);
    // The same daemon in /health as in the code; bound to loopback, it is not advertised, and says why.
    expect(p.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(health.json()).toMatchObject({
      id: p.id,
      name: 'devbox',
      mdns: { state: 'off', reason: expect.stringMatching(/127\.0\.0\.1, which no other device reaches/) as unknown, instance: null },
    });

    const paired = await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'Ada’s iPhone' } });
    expect(paired.status, paired.text).toBe(201);
    const { token, tokenId, name, daemon } = paired.json<{ token: string; tokenId: string; name: string; daemon: unknown }>();
    expect(name).toBe('Ada’s iPhone');
    expect(daemon).toEqual({ id: p.id, name: 'devbox' });
    expect(tokenId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await request('/sessions', { token })).status).toBe(200);

    const ws = new WebSocket(`wss://${host}:${port}/sessions/pi-main/stream`, { ...tls, headers: { authorization: `Bearer ${token}` } });
    const first = await new Promise<{ type: string }>((resolve, reject) => {
      ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as { type: string }));
      ws.once('error', reject);
    });
    expect(first.type).toBe('session-meta');
    ws.close();

    const list = await cli('auth', 'list');
    expect(list.stdout).toContain('Ada’s iPhone');
    expect(list.stdout).not.toContain(token);
  });

  it('refuses a different certificate before anything is sent to it', async () => {
    const p = await pairJson();
    const other = await generate([{ name: 'commonName', value: 'impostor' }], { keySize: 2048, algorithm: 'sha256' });
    let requests = 0;
    const impostor = https.createServer({ key: other.private, cert: other.cert }, (_req, res) => {
      requests++;
      res.end('{}');
    });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', r));
    const impostorPort = (impostor.address() as { port: number }).port;
    try {
      await expect(pinnedTlsOptions('127.0.0.1', impostorPort, p.fingerprint)).rejects.toBeInstanceOf(PinMismatchError);
      // Even a client that kept the real certificate cannot be talked into the impostor's.
      const kept = pinnedOptions(certPem(), p.fingerprint);
      await expect(
        pinnedRequest('127.0.0.1', impostorPort, '/pair', kept, {
          method: 'POST',
          body: { pairingToken: p.pairingToken, deviceName: 'x' },
        }),
      ).rejects.toThrow();
      expect(requests).toBe(0);
    } finally {
      impostor.close();
    }
    // The pairing token never reached anyone: it still pairs with the real daemon.
    expect((await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'after impostor' } })).status).toBe(
      201,
    );
  });

  it('a used, a wrong and an expired pairing token get 401; a bad body is a 400 that spends nothing', async () => {
    const p = await pairJson();
    const bad = await request('/pair', {
      method: 'POST',
      body: { pairingToken: p.pairingToken, deviceName: 'x', deviceToken: 'ab'.repeat(32) },
    });
    expect(bad.status).toBe(400);
    expect(bad.json<{ message: string }>().message).toMatch(/environment/);
    expect((await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 7 } })).status).toBe(400);
    expect((await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'a\nb' } })).status).toBe(400);

    expect((await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'once' } })).status).toBe(201);
    const reused = await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'twice' } });
    expect(reused.status).toBe(401);
    expect(reused.json()).toMatchObject({ error: 'unauthorized' });

    const wrong = await request('/pair', { method: 'POST', body: { pairingToken: 'A'.repeat(43), deviceName: 'wrong' } });
    expect(wrong.status).toBe(401);

    // Made six minutes ago (an injected clock): past its five.
    const old = new PairingStore(join(fx.home.dataDir, 'auth'), () => Date.now() - 6 * 60_000).create();
    const expired = await request('/pair', { method: 'POST', body: { pairingToken: old.token, deviceName: 'late' } });
    expect(expired.status).toBe(401);

    const names = (await cli('auth', 'list', '--json')).stdout;
    expect(names).not.toMatch(/"twice"|"wrong"|"late"/);
  });

  it('a pairing token is not a bearer token', async () => {
    const p = await pairJson();
    expect((await request('/sessions', { token: p.pairingToken })).status).toBe(401);
    expect((await request('/health', { token: p.pairingToken })).status).toBe(401);
  });

  it('the 11th pairing attempt in a minute from one address gets 429', async () => {
    const from = { localAddress: '127.0.0.77' };
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await request('/pair', { ...from, method: 'POST', body: { pairingToken: `wrong-${i}`, deviceName: 'guess' } });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    // Another address is not held back by it.
    expect(
      (await request('/pair', { localAddress: '127.0.0.78', method: 'POST', body: { pairingToken: 'wrong', deviceName: 'g' } })).status,
    ).toBe(401);
  });

  it('revoking a token closes its open stream with 4401 at once, and its next request is a 401', async () => {
    const p = await pairJson();
    const { token, name } = (
      await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'to revoke' } })
    ).json<{ token: string; name: string }>();
    const ws = new WebSocket(`wss://${host}:${port}/sessions/pi-main/stream`, { ...tls, headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => {
      ws.once('message', resolve);
      ws.once('error', reject);
    });
    const closed = new Promise<{ code: number; at: number }>((resolve) => ws.once('close', (code) => resolve({ code, at: Date.now() })));
    const r = await cli('auth', 'revoke', name);
    const revokedAt = Date.now();
    expect(r.code, r.stderr).toBe(0);
    const { code, at } = await closed;
    expect(code).toBe(4401);
    expect(at - revokedAt).toBeLessThan(1000);
    expect((await request('/sessions', { token })).status).toBe(401);
  });

  it('tether auth creates, names and revokes tokens; an unknown one is a clear error', async () => {
    const created = await cli('auth', 'create', 'ci-bot');
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await request('/sessions', { token })).status).toBe(200);
    expect((await cli('auth', 'name', 'ci-bot', 'build-bot')).code).toBe(0);
    const list = await cli('auth', 'list');
    expect(list.stdout).toContain('build-bot');
    expect(list.stdout).not.toContain('ci-bot');
    const unknown = await cli('auth', 'revoke', 'nobody');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no token has the name or id "nobody"/);
    expect((await cli('auth', 'revoke', 'build-bot')).code).toBe(0);
  });

  it('never serves the key, and never logs a token, a pairing token or the key', async () => {
    for (const path of ['/tls/key.pem', '/key.pem', '/%2e%2e/tls/key.pem', '/../data/tls/key.pem', '/auth/tokens.json']) {
      const r = await request(path, { token: fx.d.token });
      expect(r.status, path).toBe(404);
      expect(r.text).not.toContain('PRIVATE KEY');
    }
    const p = await pairJson();
    const { token } = (await request('/pair', { method: 'POST', body: { pairingToken: p.pairingToken, deviceName: 'log check' } })).json<{
      token: string;
    }>();
    await request(`/sessions?token=${token}`);
    const logs = await eventually(
      () => {
        const text = fx.d.stderr() + readFileSync(join(fx.home.dataDir, 'tether.log'), 'utf8');
        return text.includes('device paired') && text;
      },
      15_000,
      25,
      'the log to say "device paired"',
    );
    for (const secret of [token, p.pairingToken, fx.d.token]) expect(logs).not.toContain(secret);
    expect(logs).not.toContain('PRIVATE KEY');
  });

  it('every file under the data dir that holds a secret is mode 0600', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) files.push(p);
      }
    };
    walk(fx.home.dataDir);
    for (const must of ['auth/tokens.json', 'auth/local-token', 'auth/pairing.json', 'tls/key.pem', 'run/daemon.json']) {
      expect(files).toContain(join(fx.home.dataDir, must));
    }
    for (const f of files) expect((statSync(f).mode & 0o777).toString(8), f).toBe('600');
  });
});
