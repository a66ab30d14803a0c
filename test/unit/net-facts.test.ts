/**
 * The parsers behind the network facts `tether pair` ranks (src/cli/net-facts.ts), on the text
 * the kernel and the programs print: /proc/net/route, /proc/net/ipv6_route, `ip -j route`,
 * macOS `route -n get default` and `tailscale status --json`.
 */
import { describe, expect, it } from 'vitest';
import { parseIpRouteJson, parseMacRoute, parseProcIpv6Route, parseProcRoute, parseTailscaleStatus } from '../../src/cli/net-facts.js';

describe('network facts', () => {
  it('/proc/net/route: the up default routes only', () => {
    const text = [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0',
      'eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0',
      'docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0',
      'wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0',
      'tun0\t00000000\t00000000\t0200\t0\t0\t0\t00000000\t0\t0\t0',
    ].join('\n');
    expect(parseProcRoute(text)).toEqual([
      { interface: 'eth0', family: 'IPv4', metric: 100 },
      { interface: 'wlan0', family: 'IPv4', metric: 600 },
    ]);
    expect(parseProcRoute('')).toEqual([]);
  });

  it('/proc/net/ipv6_route: ::/0 that is up, not the reject route on lo', () => {
    const zeros = '0'.repeat(32);
    const text = [
      `${zeros} 00 ${zeros} 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0`,
      `20010db8000000000000000000000000 40 ${zeros} 00 ${zeros} 00000100 00000001 00000000 00000001     eth0`,
      `${zeros} 00 ${zeros} 00 ${zeros} ffffffff 00000001 00000000 00200200       lo`,
    ].join('\n');
    expect(parseProcIpv6Route(text)).toEqual([{ interface: 'eth0', family: 'IPv6', metric: 1024 }]);
  });

  it('ip -j route show default', () => {
    const text = JSON.stringify([
      { dst: 'default', gateway: '192.0.2.1', dev: 'eth0', flags: [] },
      { dst: 'default', gateway: '10.0.0.1', dev: 'wlan0', metric: 600, flags: [] },
      { type: 'unreachable', dst: 'default', dev: 'lo', metric: 4278198272, flags: [] },
    ]);
    expect(parseIpRouteJson(text, 'IPv4')).toEqual([
      { interface: 'eth0', family: 'IPv4', metric: 0 },
      { interface: 'wlan0', family: 'IPv4', metric: 600 },
    ]);
    expect(parseIpRouteJson('not json', 'IPv6')).toEqual([]);
  });

  it('macOS route -n get default', () => {
    const text =
      '   route to: default\ndestination: default\n       mask: default\n    gateway: 192.168.1.1\n  interface: en0\n      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING,GLOBAL>\n';
    expect(parseMacRoute(text, 'IPv4')).toEqual([{ interface: 'en0', family: 'IPv4', metric: 0 }]);
    expect(parseMacRoute('route: writing to routing socket: not in table\n', 'IPv6')).toEqual([]);
  });

  it('tailscale status --json: the MagicDNS name, the addresses, and whether a phone is on the tailnet', () => {
    const status = {
      BackendState: 'Running',
      Self: { DNSName: 'devbox.tail1234.ts.net.', TailscaleIPs: ['100.101.102.103', 'fd7a:115c:a1e0::1'], OS: 'linux' },
      Peer: { a: { OS: 'linux', DNSName: 'nas.tail1234.ts.net.' }, b: { OS: 'iOS', DNSName: 'adas-iphone.tail1234.ts.net.' } },
    };
    expect(parseTailscaleStatus(JSON.stringify(status))).toEqual({
      dnsName: 'devbox.tail1234.ts.net',
      ips: ['100.101.102.103', 'fd7a:115c:a1e0::1'],
      phonePeer: true,
    });
    expect(parseTailscaleStatus(JSON.stringify({ ...status, Peer: { a: { OS: 'linux' } } }))?.phonePeer).toBe(false);
    expect(parseTailscaleStatus(JSON.stringify({ ...status, Self: { ...status.Self, DNSName: '' } }))?.dnsName).toBeNull();
    expect(parseTailscaleStatus(JSON.stringify({ ...status, BackendState: 'Stopped' }))).toBeNull();
    expect(parseTailscaleStatus('{')).toBeNull();
  });
});
