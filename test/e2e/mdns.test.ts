/**
 * Finding the daemon again on the local network (docs/pairing.md "Finding the daemon again"),
 * on a network the test makes (test/helpers/netns.ts): the daemon listens on every interface of
 * a "host" namespace, and a phone in the "lan" namespace browses for `_tether._tcp` with a real
 * mDNS browser (another implementation than the daemon's responder, on the wire). The phone must
 * find the daemon by the id it paired with, reach it at the address the browser gives, find it
 * again at a new address after a new DHCP lease (under its own name), see it leave when it stops
 * (its goodbye), and find it again, same id and same certificate, when it is back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/config/version.js';
import { runCli } from '../helpers/daemon.js';
import { browseMdns, phoneRequest, type MdnsBrowser, type PhoneRequest, type SeenService } from '../helpers/lan-phone.js';
import { useNetnsDaemon } from '../helpers/netns-daemon.js';

const CONFIG = `bindAddress = "0.0.0.0:0"\ntls = true\nname = "devbox"\n[agent]\ncommand = "/bin/cat"\ndefault_session = "pi-main"\n`;

interface PairJson {
  url: string;
  pairingToken: string;
  port: number;
  fingerprint: string;
  name: string;
  id: string;
}

// Only a machine without root skips it; root without iproute2 is a missing install and fails.
describe.skipIf(process.getuid?.() !== 0)('finding the daemon on the local network by mDNS (network namespaces; root)', () => {
  const { f, network } = useNetnsDaemon(CONFIG);
  let browser: MdnsBrowser | null = null;
  afterEach(async () => {
    await browser?.stop();
    browser = null;
  });
  const browse = (mode: 'watch' | 'fresh') => (browser = browseMdns(network().exec(network().lan), f.home.dir, network().lanAddress, mode));
  const phone = async (request: PhoneRequest) => {
    const answer = await phoneRequest(network().exec(network().lan), f.home.dir, request);
    if (!answer.ok) expect.fail(`the phone's ${request.method} ${request.path} at ${request.host} failed: ${answer.message}`);
    return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> };
  };
  const pairJson = async (): Promise<PairJson> => {
    const r = await runCli(['pair', '--json'], f.home.env, 20_000, network().exec(network().host));
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as PairJson;
  };
  const isDaemon = (id: string) => (s: SeenService) => s.ev === 'up' && s.txt.id === id;
  /** What the first test learns: the daemon's id and certificate, and the token the phone got. */
  let known: { id: string; fp: string; deviceToken: string } | null = null;
  const paired = () => {
    if (known === null) throw new Error('the first test did not pair the phone');
    return known;
  };

  it('a browser on the lan finds it by its id: name, version and fingerprint in TXT, never a token; the phone pairs where it points', async () => {
    const p = await pairJson();
    const b = browse('watch');
    const s = await b.waitFor(isDaemon(p.id), `the service of the daemon ${p.id}`);
    expect(s).toMatchObject({ name: 'devbox', port: Number(f.d.url.port) });
    // Answered on the interface the question came in on: the uplink's address, not the bridge's.
    expect(s.addresses).toEqual([network().uplinkAddress]);
    expect(s.txt).toEqual({ id: p.id, name: 'devbox', version: packageVersion(), fp: p.fingerprint });
    expect([...s.rawTxt].sort()).toEqual([`fp=${p.fingerprint}`, `id=${p.id}`, 'name=devbox', `version=${packageVersion()}`]);
    const everything = JSON.stringify(b.seen);
    for (const secret of [f.d.token, p.pairingToken]) expect(everything).not.toContain(secret);

    // The phone goes where the browser points, pinning the fingerprint the TXT carries.
    const pair = await phone({
      host: s.addresses[0]!,
      port: s.port,
      fp: s.txt.fp!,
      method: 'POST',
      path: '/pair',
      body: { pairingToken: p.pairingToken, deviceName: 'phone on the lan' },
    });
    expect(pair.status).toBe(201);
    expect(pair.body.daemon).toEqual({ id: p.id, name: 'devbox' });
    const deviceToken = pair.body.token as string;
    const health = await phone({ host: s.addresses[0]!, port: s.port, fp: s.txt.fp!, method: 'GET', path: '/health', token: deviceToken });
    expect(health.body).toMatchObject({ id: p.id, name: 'devbox', mdns: { state: 'advertising', reason: null, instance: 'devbox' } });
    known = { id: p.id, fp: p.fingerprint, deviceToken };
  }, 120_000);

  it('given a new address (a new DHCP lease), it is found there under its own name, and the phone reaches the same daemon', async () => {
    const { id, fp, deviceToken } = paired();
    const moved = '10.201.0.9';
    network().renumberUplink(moved);
    // A browser with nothing cached, asking every second: the daemon notices the change by itself.
    // Its name stays `devbox`: no other device has it (the responder once took its own answers,
    // heard on another interface, for another device's and went on as `devbox (2)`).
    const s = await browse('fresh').waitFor(
      (x) => isDaemon(id)(x) && x.addresses.includes(moved) && x.name === 'devbox',
      `the daemon at ${moved}, named devbox`,
      90_000,
    );
    expect(s.txt.fp).toBe(fp);
    const health = await phone({ host: moved, port: s.port, fp, method: 'GET', path: '/health', token: deviceToken });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ id, name: 'devbox' });
  }, 120_000);

  it('stopped, it says goodbye and a watching browser sees it leave; started again, it is back with the same id and certificate', async () => {
    const { id, fp } = paired();
    const b = browse('watch');
    const before = await b.waitFor(isDaemon(id), 'the daemon before it stops');
    expect(await f.d.stop()).toBe(0);
    // The phone knows its daemon by the id: once it stopped, the last the browser heard of it is
    // its goodbye (a watching browser drops a service on a goodbye only: its records live for
    // minutes). Also when the daemon was making its advertisement anew just then (an address
    // changed): the goodbye of the one before is the last.
    const last = () => b.seen.filter((s) => s.txt.id === id).at(-1);
    const gone = await b.waitFor((s) => s === last() && s.ev === 'down', 'the goodbye of the stopped daemon', 30_000);
    expect(gone).toMatchObject({ name: 'devbox', host: before.host, port: before.port });
    const after = b.seen.indexOf(gone);
    await f.startAgain();
    const back = await b.waitFor((s) => b.seen.indexOf(s) > after && isDaemon(id)(s), 'the daemon started again');
    expect(back.txt).toMatchObject({ id, fp, name: 'devbox' });
    expect(back.port).toBe(Number(f.d.url.port));
  }, 120_000);
});
