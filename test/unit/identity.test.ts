/**
 * The daemon's id (src/auth/identity.ts) and what its mDNS advertisement says
 * (src/mdns/advertisement.ts) and where (src/mdns/advertiser.ts `answeringInterfaces`), with when
 * it is made (src/daemon/presence.ts `mdnsPlan`): pure parts and the data dir's file, without a
 * daemon.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureIdentity, IDENTITY_FILE, readIdentity } from '../../src/auth/identity.js';
import { mdnsPlan } from '../../src/service/health/presence.js';
import { fillDefaults } from '../../src/config/defaults.js';
import { TetherConfigSchema } from '../../src/config/config.checks.js';
import type { TetherConfig } from '../../src/config/schema.js';
import { advertisementOf, cutUtf8, MAX_INSTANCE_BYTES } from '../../src/mdns/advertisement.js';
import { answeringInterfaces } from '../../src/mdns/answering-interfaces.js';
import { domainError } from '../helpers/domain-error.js';

/** The DomainError `fn` throws, held to its code. */
function refusal(fn: () => unknown, code: 'store-io'): Error {
  try {
    fn();
  } catch (err) {
    expect(err).toEqual(domainError(code));
    return err as Error;
  }
  return expect.fail('it did not refuse');
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tether-identity-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the daemon id', () => {
  it('is made once, 128 random bits in base64url, in a 0600 file; later reads give the same', () => {
    const made = ensureIdentity(dir, () => Date.parse('2026-11-26T08:00:00Z'));
    expect(made.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(made.id, 'base64url')).toHaveLength(16);
    expect(made.createdAt).toBe('2026-11-26T08:00:00.000Z');
    expect(statSync(join(dir, IDENTITY_FILE)).mode & 0o777).toBe(0o600);
    expect(ensureIdentity(dir)).toEqual(made);
    expect(readIdentity(dir)).toEqual(made);
    // No draft is left beside it.
    expect(readdirSync(dir)).toEqual([IDENTITY_FILE]);
    expect(ensureIdentity(mkdtempSync(join(tmpdir(), 'tether-identity-other-'))).id).not.toBe(made.id);
  });

  it('made by several processes at once: they all end with the one id in the file', async () => {
    const script = `import { ensureIdentity } from ${JSON.stringify(new URL('../../src/auth/identity.ts', import.meta.url).href)};
console.log(ensureIdentity(process.argv[1]).id);`;
    const run = () =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], { timeout: 60_000 });
    const ids = (await Promise.all([run(), run(), run()])).map((r) => r.stdout.trim());
    const kept = readIdentity(dir)?.id;
    expect(ids).toEqual([kept, kept, kept]);
  }, 90_000);

  it('is null before it is made, and reading never makes it', () => {
    expect(readIdentity(dir)).toBeNull();
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ['not JSON', '{id:', 'is not JSON'],
    ['no id', '{"createdAt":"x"}', 'holds no valid id'],
    ['an id of another form', '{"id":"short"}', 'holds no valid id'],
    ['an id with a shell character', `{"id":"${'a'.repeat(21)};"}`, 'holds no valid id'],
    ['null', 'null', 'holds no valid id'],
  ])('a file with %s is refused, naming it, and left as it was', (_what, text, says) => {
    const path = join(dir, IDENTITY_FILE);
    writeFileSync(path, text);
    const err = refusal(() => ensureIdentity(dir), 'store-io');
    expect(err.message).toBe(
      `${path} ${says}: it holds this daemon's id, which paired phones know it by. Put the file back, or remove it for a new id (phones then see a new machine)`,
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('a file that cannot be read is refused with the reason', () => {
    mkdirSync(join(dir, IDENTITY_FILE));
    expect(refusal(() => readIdentity(dir), 'store-io').message).toMatch(/identity\.json cannot be read \(EISDIR/);
  });
});

describe('the mDNS advertisement', () => {
  const base = { id: 'Xq3v9LZkQm2uR7bT1cWd0A', name: 'devbox', version: '0.1.0', fingerprint: 'ab'.repeat(32), port: 7777 };

  it('says the id, name, version and fingerprint, and nothing else', () => {
    const ad = advertisementOf({ ...base, address: '0.0.0.0' });
    expect(ad).toEqual({
      instance: 'devbox',
      hostname: 'tether-xq3v9lzkqm2u',
      port: 7777,
      txt: { id: base.id, name: 'devbox', version: '0.1.0', fp: 'ab'.repeat(32) },
      onlyAddress: null,
      ipv6: false,
    });
  });

  it.each([
    ['0.0.0.0', null, false],
    ['::', null, true],
    ['192.168.1.23', '192.168.1.23', false],
    ['fd00::23', 'fd00::23', true],
  ])('bound to %s: answers for %s, with AAAA records: %s', (address, onlyAddress, ipv6) => {
    expect(advertisementOf({ ...base, address })).toMatchObject({ onlyAddress, ipv6 });
  });

  it.each([
    ['devbox.example.com', 'devbox-example-com'],
    ['  ', 'tether'],
    ['é'.repeat(40), 'é'.repeat(28)],
    ['x'.repeat(64), 'x'.repeat(MAX_INSTANCE_BYTES)],
    ['日本語のマシン名'.repeat(4), '日本語のマシン名日本語のマシン名日本'],
  ])('the instance name of %j is %j: labels are dot-free, at most 56 bytes, cut between characters', (name, instance) => {
    const ad = advertisementOf({ ...base, name, address: '0.0.0.0' });
    expect(ad.instance).toBe(instance);
    expect(Buffer.byteLength(ad.instance)).toBeLessThanOrEqual(MAX_INSTANCE_BYTES);
    // The TXT keeps the name as it is.
    expect(ad.txt.name).toBe(name);
  });

  it('cuts UTF-8 between characters, never inside one (a surrogate pair stays whole)', () => {
    expect(cutUtf8('ab😀c', 5)).toBe('ab');
    expect(cutUtf8('ab😀c', 6)).toBe('ab😀');
    expect(cutUtf8('', 3)).toBe('');
  });

  const iface = (address: string, family: 'IPv4' | 'IPv6', scopeid?: number) =>
    ({ address, family, internal: address === '127.0.0.1' || address === '::1', netmask: '', mac: '', cidr: null, scopeid }) as never;
  const machine = {
    lo: [iface('127.0.0.1', 'IPv4'), iface('::1', 'IPv6', 0)],
    wlan0: [iface('192.168.1.23', 'IPv4'), iface('192.168.1.77', 'IPv4'), iface('fe80::1', 'IPv6', 3), iface('2001:db8::23', 'IPv6', 0)],
    'eth0.10': [iface('10.10.0.2', 'IPv4')],
    wg0: [iface('fd00::2', 'IPv6', 0)],
  };
  const at = (address: string) => advertisementOf({ ...base, address });

  it.each([
    ['0.0.0.0', ['eth0.10', 'wlan0'], null],
    ['::', ['eth0.10', 'wg0', 'wlan0'], null],
    ['192.168.1.23', ['wlan0'], null],
    ['2001:db8::23', ['wlan0'], null],
    ['fd00::2', ['wg0'], null],
    [
      '192.168.1.77',
      [],
      'tether listens on 192.168.1.77, not the first such address of wlan0 (192.168.1.23): the mDNS responder announces only that one; bind 192.168.1.23 or every interface to be advertised',
    ],
    ['192.168.9.9', [], 'no interface has 192.168.9.9 now: advertised once one has'],
  ])('bound to %s, it answers on %j (or says why not: %s)', (address, names, why) => {
    expect(answeringInterfaces(at(address), machine)).toEqual({ names, why });
  });

  it('bound to every interface of a machine with no address yet, it waits for one', () => {
    expect(answeringInterfaces(at('0.0.0.0'), { lo: machine.lo })).toEqual({
      names: [],
      why: 'no network interface has an address: advertised once one has',
    });
  });
});

describe('when the daemon is advertised', () => {
  it.each([
    ['0.0.0.0', true, true, null],
    ['192.168.1.23', true, true, null],
    ['127.0.0.1', true, true, 'tether listens on 127.0.0.1, which no other device reaches (bindAddress)'],
    ['::1', true, true, 'tether listens on ::1, which no other device reaches (bindAddress)'],
    ['localhost', true, true, 'tether listens on localhost, which no other device reaches (bindAddress)'],
    ['0.0.0.0', false, true, 'tls = false: a daemon serving plain http is not advertised (phones reach it through its TLS proxy)'],
    ['0.0.0.0', true, false, 'off in the config ([discovery] mdns = false)'],
  ])('bound to %s, TLS %s, [discovery] mdns = %s: %s', (host, tls, mdns, reason) => {
    const config = fillDefaults(TetherConfigSchema, { discovery: { mdns } }) as TetherConfig;
    expect(mdnsPlan(config, host, tls)).toBe(reason);
  });
});
