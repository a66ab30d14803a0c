/**
 * The address `tether pair` puts in the QR code, on a real network: in network namespaces the
 * test makes (test/helpers/netns.ts), tether listens on every interface of a "host" whose first
 * interface is a bridge with an address (the old choice), beside a veth and an uplink holding
 * the default route. The code must carry the uplink's address and list the others, and a phone
 * in the "lan" namespace must pair with it, by address and by a name the certificate does not
 * list. Then `publicBaseUrl` and `--host` overrides, and bad `--host` input.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonHome, ROOT, runCli, type DaemonHome } from '../helpers/daemon.js';
import { useNetnsDaemon } from '../helpers/netns-daemon.js';
import { runNodeJson } from '../helpers/lan-phone.js';
import { decodeTerminalQr } from '../helpers/qr-decode.js';

interface Candidate {
  host: string;
  interface: string | null;
  kind: string;
  usable: boolean;
  chosen: boolean;
  note: string;
}
interface PairJson {
  url: string;
  pairingToken: string;
  host: string;
  port: number;
  fingerprint: string | null;
  hostFrom: string;
  candidates: Candidate[];
  warnings: string[];
}

/** A phone: pins the fingerprint from the code, then POST /pair (the reference client, built). */
const PHONE = `
import https from 'node:https';
import { isIP } from 'node:net';
import { pinnedTlsOptions } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/reference-client/pinning.js')).href)};
const [host, port, fp, pairingToken] = process.argv.slice(2);
try {
  const tls = await pinnedTlsOptions(host, Number(port), fp, 10000);
  const body = JSON.stringify({ pairingToken, deviceName: 'phone on the lan' });
  const res = await new Promise((resolve, reject) => {
    const req = https.request({ host, port: Number(port), path: '/pair', method: 'POST', ...tls,
      ...(isIP(host) ? {} : { servername: host }),
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
      let text = '';
      r.on('data', (d) => (text += d));
      r.on('end', () => resolve({ status: r.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  console.log(JSON.stringify({ ok: true, ...res }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, code: err.code ?? null, message: err.message }));
}
`;

/** The address the old `tether pair` took: the first non-internal IPv4 address in the OS's list. */
const FIRST_IPV4 = `
import { networkInterfaces } from 'node:os';
const first = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal);
console.log(JSON.stringify({ first: first?.address ?? null }));
`;

const CONFIG = `bindAddress = "0.0.0.0:0"\ntls = true\nname = "devbox"\n[agent]\ncommand = "/bin/cat"\ndefault_session = "pi-main"\n`;

// Only a machine without root skips it; root without iproute2 is a missing install and fails.
describe.skipIf(process.getuid?.() !== 0)('the pairing address on a machine with a bridge (network namespaces; root)', () => {
  const { f, network } = useNetnsDaemon(CONFIG);
  const pair = async (...args: string[]) => runCli(['pair', ...args], f.home.env, 20_000, network().exec(network().host));
  const pairJson = async (...args: string[]): Promise<PairJson> => {
    const r = await pair('--json', ...args);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as PairJson;
  };
  const script = (name: string, text: string) => {
    const path = join(f.home.dir, name);
    writeFileSync(path, text);
    return path;
  };
  const phone = (host: string, p: PairJson) =>
    runNodeJson<Record<string, unknown>>(network().exec(network().lan), script('phone.mjs', PHONE), [
      host,
      String(p.port),
      p.fingerprint ?? '',
      p.pairingToken,
    ]);

  it('the bridge is the first address the OS lists (the old choice would have been it)', async () => {
    const r = await runNodeJson<Record<string, unknown>>(network().exec(network().host), script('first-ipv4.mjs', FIRST_IPV4), []);
    expect(r.first).toBe(network().bridgeAddress);
  }, 90_000);

  it('tether pair --json carries the uplink address and lists the bridge and the veth, not chosen', async () => {
    const p = await pairJson();
    expect(p.host).toBe(network().uplinkAddress);
    expect(p.hostFrom).toBe('interfaces');
    expect(new URL(p.url.replace(/^tether:/, 'https:')).hostname).toBe(network().uplinkAddress);
    expect(p.port).toBe(Number(f.d.url.port));
    const chosen = p.candidates.filter((c) => c.chosen);
    expect(chosen).toEqual([expect.objectContaining({ host: network().uplinkAddress, interface: 'uplink0', usable: true })]);
    expect(p.candidates.find((c) => c.host === network().bridgeAddress)).toMatchObject({
      interface: network().bridge,
      kind: 'bridge',
      usable: false,
      chosen: false,
    });
    expect(p.candidates.find((c) => c.host === network().vethAddress)).toMatchObject({ usable: false, chosen: false });
    expect(p.candidates.some((c) => c.host === '127.0.0.1')).toBe(false);
  }, 90_000);

  it('tether pair shows the code with that address and lists every address with its reason', async () => {
    const r = await pair();
    expect(r.code, r.stderr).toBe(0);
    const url = /^tether:\/\/\S+$/m.exec(r.stdout)?.[0];
    expect(decodeTerminalQr(r.stdout, 'dark')).toBe(url);
    expect(new URL(url!.replace(/^tether:/, 'https:')).hostname).toBe(network().uplinkAddress);
    expect(r.stdout).toContain(`The code carries ${network().uplinkAddress} (the best of the addresses below).`);
    expect(r.stdout).toMatch(new RegExp(`^  \\* ${network().uplinkAddress.replace(/\./g, '\\.')} +uplink0 +on the default route$`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^  x ${network().bridgeAddress.replace(/\./g, '\\.')} +tbr-x +a bridge`, 'm'));
    expect(r.stdout).toContain('tether pair --host');
    expect(r.stderr).toBe('');
  }, 90_000);

  it('a phone on the lan pairs with the address in the code; the bridge address does not even route', async () => {
    const p = await pairJson();
    const paired = await phone(p.host, p);
    expect(paired, JSON.stringify(paired)).toMatchObject({ ok: true, status: 201 });
    expect(JSON.parse(paired.text as string)).toMatchObject({ name: 'phone on the lan' });
    const bridge = await phone(network().bridgeAddress, await pairJson());
    expect(bridge).toMatchObject({ ok: false, code: 'ENETUNREACH' });
  }, 90_000);

  it('--host with a name the certificate does not list: the phone pins the fingerprint and pairs', async () => {
    const name = 'devbox.tether-test';
    const cert = new X509Certificate(readFileSync(join(f.home.dataDir, 'tls/cert.pem'), 'utf8'));
    expect(cert.subjectAltName).not.toContain(name);
    expect(cert.subjectAltName).not.toContain(network().uplinkAddress);
    network().nameInLan(name, network().uplinkAddress);
    const p = await pairJson('--host', name);
    expect(p.host).toBe(name);
    expect(p.hostFrom).toBe('host-flag');
    expect(p.url).toMatch(new RegExp(`^tether://${name.replace(/\./g, '\\.')}:${p.port}\\?`));
    expect(p.candidates.filter((c) => c.chosen)).toEqual([]);
    const paired = await phone(name, p);
    expect(paired, JSON.stringify(paired)).toMatchObject({ ok: true, status: 201 });
  }, 90_000);
});

describe('tether pair: publicBaseUrl, --host, and bad --host', () => {
  let home: DaemonHome;
  beforeAll(() => {
    home = daemonHome('/nonexistent-tmux-socket', `tls = false\npublicBaseUrl = "https://tether.example.net:8443"\n`);
  });
  afterAll(() => home?.cleanup());
  const pairing = () => join(home.dataDir, 'auth/pairing.json');
  const pairJson = async (...args: string[]): Promise<PairJson> => {
    const r = await runCli(['pair', '--json', ...args], home.env);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as PairJson;
  };

  it('bad --host input is a clear error, and no pairing token is made', async () => {
    // A NUL cannot be passed in argv at all; the unit test (test/unit/pair-address.test.ts) refuses it.
    const bad = ['', ' ', 'dev box', 'devbox;id', 'a;rm -rf ~', 'devbox\nevil', 'devbox:7777', '$(id)'];
    // Two at a time: a CLI start is a few seconds on two busy cores.
    for (let i = 0; i < bad.length; i += 2) {
      const pair = bad.slice(i, i + 2);
      const results = await Promise.all(pair.map((h) => runCli(['pair', '--host', h], home.env, 90_000)));
      results.forEach((r, j) => {
        const what = `--host ${JSON.stringify(pair[j])}`;
        expect(r.code, what).toBe(2);
        expect(r.stderr, what).toMatch(/^tether: --host must be a host name or an IP address, got ".*": .+\n$/);
        expect(r.stdout, what).toBe('');
      });
    }
    expect(existsSync(pairing())).toBe(false);
  }, 400_000);

  it('publicBaseUrl: its host and port are in the code', async () => {
    const p = await pairJson();
    expect(p).toMatchObject({ host: 'tether.example.net', port: 8443, hostFrom: 'publicBaseUrl', fingerprint: null, candidates: [] });
    expect(p.url).toMatch(/^tether:\/\/tether\.example\.net:8443\?pair=/);
    expect(existsSync(pairing())).toBe(true);
  }, 90_000);

  it('--host beats publicBaseUrl (its port stays), and says the proxy certificate must name it', async () => {
    const p = await pairJson('--host', 'devbox.example.org');
    expect(p).toMatchObject({ host: 'devbox.example.org', port: 8443, hostFrom: 'host-flag' });
    expect(p.url).toMatch(/^tether:\/\/devbox\.example\.org:8443\?pair=/);
    expect(p.warnings).toContainEqual(expect.stringMatching(/proxy's certificate.*devbox\.example\.org/));
    const v6 = await pairJson('--host', '[2001:db8::7]');
    expect(v6.host).toBe('2001:db8::7');
    expect(v6.url).toMatch(/^tether:\/\/\[2001:db8::7\]:8443\?/);
  }, 90_000);
});
