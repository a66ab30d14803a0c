/**
 * Which network interfaces the advertisement answers on, read from the machine's interfaces
 * now, and the addresses it announces there (advertiser.ts starts the responder anew when they
 * change). The responder library's own search for them on Linux misses every interface iproute2
 * names `name@link` (veth, VLANs, a container's eth0), so tether chooses them itself.
 *
 * Invariant: pure; the same interfaces give the same choice, and an empty choice says why.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import type { Advertisement } from './advertisement.js';

/** The machine's interfaces and their addresses, as `os.networkInterfaces()` gives them. */
export type InterfaceMap = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** Where the advertisement can answer now: the interfaces (by name, sorted), or why nowhere. */
export interface Answering {
  readonly names: readonly string[];
  readonly why: string | null;
}

/**
 * The interfaces `names` with the addresses the responder announces there (the first of each
 * kind: IPv4, and the IPv6 kinds when `ad.ipv6`), in one string: when it changes, the
 * advertisement is made anew.
 */
export function addressesOn(ad: Advertisement, names: readonly string[], all: InterfaceMap): string {
  const announced = (a: NetworkInterfaceInfo) => a.family === 'IPv4' || (ad.ipv6 && a.family === 'IPv6');
  return names
    .map((name) => {
      const firsts = new Map<string, string>();
      for (const a of (all[name] ?? []).filter(announced)) if (!firsts.has(kindOf(a))) firsts.set(kindOf(a), a.address);
      return `${name}=${[...firsts.values()].join(',')}`;
    })
    .join(' ');
}

/** The kind of address the responder keeps one of per interface: IPv4, IPv6 link-local, unique local, global. */
function kindOf(a: NetworkInterfaceInfo): string {
  if (a.family === 'IPv4') return 'v4';
  if (a.scopeid) return 'v6-link';
  return /^f[cd]/i.test(a.address) ? 'v6-ula' : 'v6-global';
}

/**
 * Where `ad` is answered for. Listening on every interface: those with an address other devices
 * reach (IPv4; IPv6 too when `ad.ipv6`). Listening on one address: its interface, when the
 * address is the first of its kind there, since the responder keeps one address of each kind per
 * interface (the first) and would otherwise announce an address the daemon does not listen on.
 */
export function answeringInterfaces(ad: Advertisement, all: InterfaceMap): Answering {
  const only = ad.onlyAddress;
  if (only === null) {
    const names = Object.entries(all)
      .filter(([, addresses]) => addresses?.some((a) => !a.internal && (a.family === 'IPv4' || (ad.ipv6 && a.family === 'IPv6'))))
      .map(([name]) => name)
      .sort();
    return { names, why: names.length > 0 ? null : 'no network interface has an address: advertised once one has' };
  }
  for (const [name, addresses = []] of Object.entries(all)) {
    const held = addresses.find((a) => a.address === only);
    if (!held) continue;
    const first = addresses.find((a) => kindOf(a) === kindOf(held))!;
    if (first === held) return { names: [name], why: null };
    return {
      names: [],
      why: `tether listens on ${only}, not the first such address of ${name} (${first.address}): the mDNS responder announces only that one; bind ${first.address} or every interface to be advertised`,
    };
  }
  return { names: [], why: `no interface has ${only} now: advertised once one has` };
}
