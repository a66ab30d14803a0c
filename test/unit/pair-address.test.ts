/**
 * The choice of the pairing address over described machines (src/cli/pair-address.ts): a
 * workstation with docker, a veth and a WireGuard tunnel; a machine reachable only over a VPN;
 * one without a default route; an IPv6-only one; Tailscale with and without a phone on the
 * tailnet; an mDNS responder; a LAN bridge that holds the default route. And `--host` checking.
 */
import { describe, expect, it } from 'vitest';
import { parseHostFlag, rankAddresses, type NetFacts, type NetInterface } from '../../src/cli/pair-address.js';

const v4 = (address: string) => ({ address, family: 'IPv4' as const, internal: false });
const v6 = (address: string) => ({ address, family: 'IPv6' as const, internal: false });
const lo: NetInterface = {
  name: 'lo',
  addresses: [
    { address: '127.0.0.1', family: 'IPv4', internal: true },
    { address: '::1', family: 'IPv6', internal: true },
  ],
  isBridge: false,
  hasDevice: false,
};
const nic = (name: string, addresses: NetInterface['addresses'], more: Partial<NetInterface> = {}): NetInterface => ({
  name,
  addresses,
  isBridge: false,
  hasDevice: true,
  ...more,
});
const facts = (more: Partial<NetFacts>): NetFacts => ({
  hostname: 'devbox',
  interfaces: [lo],
  defaultRoutes: [],
  tailscale: null,
  mdnsName: null,
  ...more,
});
const BOTH = { ipv4: true, ipv6: true };
const V4 = { ipv4: true, ipv6: false };
const hosts = (choice: ReturnType<typeof rankAddresses>) => choice.candidates.map((c) => c.host);

describe('choosing the pairing address', () => {
  // docker0 and a veth come first in the OS's order, as they do on many workstations.
  const workstation = facts({
    interfaces: [
      lo,
      nic('docker0', [v4('172.17.0.1'), v6('fe80::42:acff:fe11:1')], { isBridge: true, hasDevice: false }),
      nic('veth3f2a1b0', [v6('fe80::1c2d:3eff:fe4f:5a6b')], { hasDevice: false }),
      nic('eth0', [v4('192.168.1.23'), v6('2001:db8::23'), v6('fe80::a00:27ff:fe4e:66a1')]),
      nic('wg0', [v4('10.8.0.2')], { hasDevice: false }),
    ],
    defaultRoutes: [{ interface: 'eth0', family: 'IPv4', metric: 100 }],
  });

  it('docker0 + veth + eth0 + wg0: the default route wins, the bridge and the veth are listed and never chosen', () => {
    const choice = rankAddresses(workstation, V4);
    expect(choice.chosen).toMatchObject({ host: '192.168.1.23', interface: 'eth0', kind: 'lan', usable: true });
    expect(hosts(choice)[0]).toBe('192.168.1.23');
    const docker = choice.candidates.find((c) => c.host === '172.17.0.1');
    expect(docker).toMatchObject({ kind: 'bridge', usable: false });
    expect(docker?.note).toMatch(/containers or VMs/);
    expect(choice.candidates.find((c) => c.interface === 'veth3f2a1b0')?.usable).toBe(false);
    // The tunnel is usable (a phone on that VPN), but after the LAN.
    expect(choice.candidates.find((c) => c.host === '10.8.0.2')).toMatchObject({ kind: 'vpn', usable: true });
    expect(hosts(choice).indexOf('10.8.0.2')).toBeGreaterThan(0);
    // Bound to 0.0.0.0: the IPv6 addresses are listed, with the reason they cannot be used.
    const v6 = choice.candidates.find((c) => c.host === '2001:db8::23');
    expect(v6?.usable).toBe(false);
    expect(v6?.note).toMatch(/does not listen on IPv6/);
    expect(choice.candidates.some((c) => c.host === '127.0.0.1' || c.host === '::1')).toBe(false);
  });

  it('listening on both families: IPv4 before IPv6 on the same interface, link-local never', () => {
    const choice = rankAddresses(workstation, BOTH);
    expect(hosts(choice).slice(0, 2)).toEqual(['192.168.1.23', '2001:db8::23']);
    expect(choice.candidates.find((c) => c.host === 'fe80::a00:27ff:fe4e:66a1')).toMatchObject({ kind: 'link-local', usable: false });
  });

  it('a full-tunnel VPN holding the default route does not beat the LAN interface', () => {
    const choice = rankAddresses(facts({ ...workstation, defaultRoutes: [{ interface: 'wg0', family: 'IPv4', metric: 0 }] }), V4);
    expect(choice.chosen?.host).toBe('192.168.1.23');
  });

  it('a VPN-only machine pairs over the VPN', () => {
    const choice = rankAddresses(
      facts({
        interfaces: [lo, nic('wg0', [v4('10.8.0.2')], { hasDevice: false })],
        defaultRoutes: [{ interface: 'wg0', family: 'IPv4', metric: 0 }],
      }),
      V4,
    );
    expect(choice.chosen).toMatchObject({ host: '10.8.0.2', kind: 'vpn' });
  });

  it('no default route: a real interface still beats a bridge that sorts first', () => {
    const choice = rankAddresses(
      facts({
        interfaces: [lo, nic('br-4f1c', [v4('172.18.0.1')], { isBridge: true, hasDevice: false }), nic('enp3s0', [v4('192.168.7.40')])],
      }),
      V4,
    );
    expect(choice.chosen?.host).toBe('192.168.7.40');
    expect(choice.candidates.at(-1)).toMatchObject({ host: '172.18.0.1', usable: false });
  });

  it('only container bridges: nothing is chosen, everything is listed with its reason', () => {
    const choice = rankAddresses(
      facts({ interfaces: [lo, nic('virbr0', [v4('192.168.122.1')], { isBridge: true }), nic('cni0', [v4('10.88.0.1')])] }),
      BOTH,
    );
    expect(choice.chosen).toBeNull();
    expect(hosts(choice)).toEqual(['192.168.122.1', '10.88.0.1']);
  });

  it('IPv6-only: the global address on the default route, and none when tether listens on IPv4 only', () => {
    const v6only = facts({
      interfaces: [lo, nic('eth0', [v6('fe80::5054:ff:fe12:3456'), v6('2001:db8:4::17')])],
      defaultRoutes: [{ interface: 'eth0', family: 'IPv6', metric: 1024 }],
    });
    expect(rankAddresses(v6only, BOTH).chosen).toMatchObject({ host: '2001:db8:4::17', interface: 'eth0' });
    expect(rankAddresses(v6only, V4).chosen).toBeNull();
  });

  it('a bridge that holds the default route is the LAN (a VM host bridge such as vmbr0)', () => {
    const choice = rankAddresses(
      facts({
        interfaces: [lo, nic('vmbr0', [v4('192.168.1.5')], { isBridge: true, hasDevice: false })],
        defaultRoutes: [{ interface: 'vmbr0', family: 'IPv4', metric: 0 }],
      }),
      V4,
    );
    expect(choice.chosen?.host).toBe('192.168.1.5');
  });

  it('Tailscale with a phone on the tailnet: the MagicDNS name first, then the LAN', () => {
    const ts = facts({
      ...workstation,
      interfaces: [...workstation.interfaces, nic('tailscale0', [v4('100.101.102.103'), v6('fd7a:115c:a1e0::1')], { hasDevice: false })],
      tailscale: { dnsName: 'devbox.tail1234.ts.net', ips: ['100.101.102.103', 'fd7a:115c:a1e0::1'], phonePeer: true },
    });
    const choice = rankAddresses(ts, V4);
    expect(choice.chosen).toMatchObject({ host: 'devbox.tail1234.ts.net', kind: 'magicdns' });
    expect(hosts(choice).slice(1, 3)).toEqual(['100.101.102.103', '192.168.1.23']);
  });

  it('Tailscale without a phone on it: the LAN first, Tailscale listed after', () => {
    const ts = facts({
      ...workstation,
      interfaces: [...workstation.interfaces, nic('utun4', [v4('100.70.1.2')], { hasDevice: null, isBridge: null })],
      tailscale: { dnsName: 'devbox.tail1234.ts.net', ips: ['100.70.1.2'], phonePeer: false },
    });
    const choice = rankAddresses(ts, V4);
    expect(choice.chosen?.host).toBe('192.168.1.23');
    expect(choice.candidates.find((c) => c.host === '100.70.1.2')?.kind).toBe('tailscale');
    expect(choice.candidates.find((c) => c.host === 'devbox.tail1234.ts.net')?.usable).toBe(true);
  });

  it('Tailscale whose addresses are on no interface here (another network namespace): its name is not chosen', () => {
    const elsewhere = facts({
      ...workstation,
      tailscale: { dnsName: 'devbox.tail1234.ts.net', ips: ['100.101.102.103'], phonePeer: true },
    });
    const choice = rankAddresses(elsewhere, V4);
    expect(choice.chosen?.host).toBe('192.168.1.23');
    expect(choice.candidates.find((c) => c.kind === 'magicdns')).toMatchObject({
      usable: false,
      note: expect.stringMatching(/no interface/) as unknown,
    });
  });

  it('an mDNS responder: the .local name ahead of the address it stands for, only with a LAN', () => {
    expect(rankAddresses(facts({ ...workstation, mdnsName: 'devbox.local' }), V4).chosen).toMatchObject({
      host: 'devbox.local',
      kind: 'mdns',
    });
    const vpnOnly = facts({ interfaces: [lo, nic('wg0', [v4('10.8.0.2')])], mdnsName: 'devbox.local' });
    expect(hosts(rankAddresses(vpnOnly, V4))).toEqual(['10.8.0.2']);
  });

  it('two default routes: the lower metric first', () => {
    const choice = rankAddresses(
      facts({
        interfaces: [lo, nic('wlan0', [v4('192.168.1.50')]), nic('eth0', [v4('192.168.1.23')])],
        defaultRoutes: [
          { interface: 'wlan0', family: 'IPv4', metric: 600 },
          { interface: 'eth0', family: 'IPv4', metric: 100 },
        ],
      }),
      V4,
    );
    expect(hosts(choice)).toEqual(['192.168.1.23', '192.168.1.50']);
  });
});

describe('tether pair --host', () => {
  it.each([
    ['devbox.example.net', 'devbox.example.net'],
    ['devbox.example.net.', 'devbox.example.net'],
    ['192.168.1.23', '192.168.1.23'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
  ])('takes host names and IP addresses: %s is %s', (flag, host) => {
    expect(parseHostFlag(flag)).toBe(host);
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['dev box', /space or a control character/],
    ['devbox;rm -rf ~', /space or a control character/],
    ['devbox;id', /labels/],
    ['devbox\nevil', /control character/],
    ['devbox\0', /control character/],
    ['devbox:7777', /port/],
    ['fe80::1%eth0', /zone/],
    ['-devbox', /labels/],
    ['dev..box', /labels/],
    ['a'.repeat(64), /labels/],
    [`${'a.'.repeat(127)}ab`, /longer than 253/],
    ['https://devbox', /labels|port/],
  ])('refuses %j', (input, why) => {
    expect(() => parseHostFlag(input)).toThrow(/^--host must be a host name or an IP address, got ".*": /);
    expect(() => parseHostFlag(input)).toThrow(why);
  });
});
