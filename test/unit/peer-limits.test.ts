/**
 * The key a remote address is counted under by the connection limits (src/transport/peer-limits.ts):
 * an IPv4 address itself, however written; an IPv6 address by its /64, however written.
 */
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/transport/peer-limits.js';

describe('addressKey', () => {
  it.each([
    ['an IPv4 address', '192.168.1.20', '192.168.1.20'],
    ['an IPv4-mapped IPv6 address', '::ffff:192.168.1.20', '192.168.1.20'],
    ['the same, upper case', '::FFFF:10.0.0.1', '10.0.0.1'],
    ['IPv6 loopback', '::1', '0:0:0:0::/64'],
    ['a full IPv6 address', '2001:0db8:0001:0002:0003:0004:0005:0006', '2001:db8:1:2::/64'],
    ['another host of the same /64', '2001:db8:1:2:ffff::9', '2001:db8:1:2::/64'],
    ['a compressed prefix', '2001:db8::1', '2001:db8:0:0::/64'],
    ['a link-local address with its zone', 'fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['an embedded IPv4 tail', '64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
  ])('%s: %s counts as %s', (_what, address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('tells two /64s apart', () => {
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
  });
});
