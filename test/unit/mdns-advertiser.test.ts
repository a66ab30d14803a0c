/**
 * How the daemon keeps its mDNS worker (src/mdns/advertiser.ts), with real worker threads that
 * stand in for the responder (each a few lines of a module given as a data: URL): what a worker
 * writes reaches the log and never stdout; a worker that ends is started again after a back-off
 * that doubles, while the status says why; an interface that comes up, or an address that
 * changes, starts the advertisement anew (under the daemon's own name); a stop asks for the
 * goodbye and waits for it. The responder itself is
 * tested on the wire (test/e2e/mdns.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { advertisementOf } from '../../src/mdns/advertisement.js';
import { MdnsAdvertiser, type AdvertiserDeps } from '../../src/mdns/advertiser.js';
import { eventually } from '../helpers/tmux.js';
import { capturingLog } from '../helpers/capturing-log.js';

/** A worker module: `body` runs with `parentPort` and `workerData` at hand. */
const workerOf = (body: string) =>
  new URL(`data:text/javascript,${encodeURIComponent(`import { parentPort, workerData } from 'node:worker_threads';\n${body}`)}`);

/** A responder that works: says it advertises, and answers a stop with its goodbye. */
const GOOD = workerOf(`
console.log('a line the library writes to the console');
parentPort.postMessage({ type: 'advertising' });
parentPort.on('message', (m) => {
  if (m.type === 'stop') { console.log('goodbye sent on ' + workerData.interfaces.join(',')); parentPort.postMessage({ type: 'stopped' }); }
});`);

/** A machine whose interfaces are `names`, each with an IPv4 address. */
const machineWith = (names: readonly string[]) =>
  Object.fromEntries(
    names.map((name, i) => [name, [{ address: `10.0.${i}.2`, family: 'IPv4', internal: false, netmask: '', mac: '', cidr: null }]]),
  ) as never;

const ad = advertisementOf({
  id: 'Xq3v9LZkQm2uR7bT1cWd0A',
  name: 'devbox',
  version: '0.1.0',
  fingerprint: 'ab'.repeat(32),
  address: '0.0.0.0',
  port: 7777,
});

let running: MdnsAdvertiser | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});
const start = (deps: Omit<AdvertiserDeps, 'ad'>) => {
  running = new MdnsAdvertiser({ ad, ...deps });
  running.start();
  return running;
};

describe('the mDNS worker, kept by the daemon', () => {
  it('advertises; what the worker writes goes to the log, not stdout; a stop waits for the goodbye', async () => {
    const { log, lines } = capturingLog();
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      written.push(String(chunk));
      return write(chunk, ...rest);
    };
    try {
      const a = start({ log, workerUrl: GOOD, networkInterfaces: () => machineWith(['eth0']) });
      expect(a.status()).toEqual({ state: 'starting', reason: null, instance: 'devbox' });
      await eventually(() => a.status().state === 'advertising', 15_000, 25, 'the worker says it advertises');
      await eventually(
        () => lines.some((l) => l.obj.mdns === 'a line the library writes to the console'),
        15_000,
        25,
        'the line in the log',
      );
      await a.stop();
      expect(a.status()).toEqual({ state: 'off', reason: 'the daemon stopped', instance: null });
      expect(lines.some((l) => l.obj.mdns === 'goodbye sent on eth0')).toBe(true);
      expect(written.join('')).not.toMatch(/a line the library writes|goodbye sent/);
    } finally {
      process.stdout.write = write;
    }
  });

  it('a worker that ends is started again after a back-off that doubles, and the status says why', async () => {
    const { log, lines } = capturingLog();
    const a = start({ log, workerUrl: workerOf('process.exit(3);'), networkInterfaces: () => machineWith(['eth0']), retryFirstMs: 200 });
    await eventually(() => a.status().state === 'retrying', 15_000, 25, 'the first failure');
    expect(a.status().reason).toBe('mDNS advertising failed (its thread ended (exit code 3)); trying again in 0 s');
    const failures = () => lines.filter((l) => l.msg === 'mDNS advertising failed');
    await eventually(() => failures().length >= 3, 30_000, 25, 'three failures, each after its wait');
    expect(
      failures()
        .slice(0, 3)
        .map((l) => l.obj.retryInS),
    ).toEqual([0.2, 0.4, 0.8]);
  }, 60_000);

  it('with no interface that has an address it waits, and advertises once one comes up; a new one starts it anew on both', async () => {
    const { log, lines } = capturingLog();
    let names: string[] = [];
    const a = start({ log, workerUrl: GOOD, networkInterfaces: () => machineWith(names), pollMs: 50 });
    expect(a.status()).toEqual({ state: 'off', reason: 'no network interface has an address: advertised once one has', instance: null });
    names = ['wlan0'];
    await eventually(() => a.status().state === 'advertising', 15_000, 25, 'advertising once wlan0 has an address');
    names = ['eth1', 'wlan0'];
    const advertisedOn = () =>
      lines.filter((l) => l.msg === 'advertised on the local network (mDNS, _tether._tcp)').map((l) => l.obj.interfaces);
    await eventually(() => advertisedOn().includes('eth1 wlan0'), 15_000, 25, 'advertised anew on eth1 and wlan0');
    expect(advertisedOn()).toEqual(['wlan0', 'eth1 wlan0']);
    // The one on wlan0 alone said goodbye before the new one started.
    expect(lines.some((l) => l.obj.mdns === 'goodbye sent on wlan0')).toBe(true);
  });

  it("an address that changes (a new DHCP lease) makes the advertisement anew, under the daemon's own name again", async () => {
    const { log, lines } = capturingLog();
    let address = '10.0.0.2';
    const machine = () => ({ eth0: [{ address, family: 'IPv4', internal: false, netmask: '', mac: '', cidr: null }] }) as never;
    // A responder that was renamed on the network while it ran (as the library did with its own
    // answers heard on another interface); the one started after is not (a worker takes a copy of
    // the environment when it starts).
    const renamedWhen = workerOf(`
parentPort.postMessage({ type: 'advertising' });
if (process.env.TETHER_TEST_RENAMED === '1') parentPort.postMessage({ type: 'renamed', instance: 'devbox (2)' });
parentPort.on('message', (m) => {
  if (m.type === 'stop') { console.log('goodbye sent'); parentPort.postMessage({ type: 'stopped' }); }
});`);
    process.env.TETHER_TEST_RENAMED = '1';
    try {
      const a = start({ log, workerUrl: renamedWhen, networkInterfaces: machine, pollMs: 50 });
      await eventually(() => a.status().instance === 'devbox (2)', 15_000, 25, 'the first responder renamed');
      delete process.env.TETHER_TEST_RENAMED;
      address = '10.0.0.9';
      const advertised = () => lines.filter((l) => l.msg === 'advertised on the local network (mDNS, _tether._tcp)');
      await eventually(() => advertised().length === 2, 15_000, 25, 'advertised anew after the address changed');
      expect(a.status()).toEqual({ state: 'advertising', reason: null, instance: 'devbox' });
      expect(advertised().map((l) => l.obj.instance)).toEqual(['devbox', 'devbox']);
      expect(lines.filter((l) => l.obj.mdns === 'goodbye sent')).toHaveLength(1);
    } finally {
      delete process.env.TETHER_TEST_RENAMED;
    }
  });
});
