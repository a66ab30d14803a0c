/**
 * Which address of this machine `tether pair` puts in the QR code when the daemon listens on
 * every interface (docs/pairing.md "Which address"). Pure: it ranks a description of the
 * machine's network (interfaces, default routes, Tailscale, mDNS; gathered by net-facts.ts)
 * the way a person would, and says for every address why it is or is not a phone's way in.
 *
 * Invariant: an address a phone can never reach (a container or VM bridge, a veth, a link-local
 * address, a family the daemon does not listen on) is listed but never chosen.
 */
import { isIP } from 'node:net';
import { hasControlChar } from '../protocol/text.js';

/** One interface as the OS reports it, with what sysfs says about it (null: not known). */
export interface NetInterface {
  readonly name: string;
  readonly addresses: readonly { readonly address: string; readonly family: 'IPv4' | 'IPv6'; readonly internal: boolean }[];
  /** /sys/class/net/<name>/bridge exists: a software bridge. */
  readonly isBridge: boolean | null;
  /** /sys/class/net/<name>/device exists: backed by hardware. */
  readonly hasDevice: boolean | null;
}

/** A default route: the interface traffic to the rest of the world leaves by. */
export interface DefaultRoute {
  readonly interface: string;
  readonly family: 'IPv4' | 'IPv6';
  readonly metric: number;
}

/** `tailscale status --json`, reduced to what matters here. */
export interface TailscaleSelf {
  /** The MagicDNS name, without the trailing dot; null when MagicDNS is off. */
  readonly dnsName: string | null;
  readonly ips: readonly string[];
  /** A phone (iOS or Android) is on the same tailnet: it can reach the Tailscale addresses. */
  readonly phonePeer: boolean;
}

/** Everything the choice depends on. */
export interface NetFacts {
  readonly hostname: string;
  readonly interfaces: readonly NetInterface[];
  readonly defaultRoutes: readonly DefaultRoute[];
  /** Null when Tailscale is not installed or not running. */
  readonly tailscale: TailscaleSelf | null;
  /** The name an mDNS responder (avahi, macOS) publishes for this machine, or null. */
  readonly mdnsName: string | null;
}

/** The address families the daemon accepts connections on. */
export interface Listening {
  readonly ipv4: boolean;
  readonly ipv6: boolean;
}

export type CandidateKind = 'magicdns' | 'mdns' | 'lan' | 'tailscale' | 'vpn' | 'bridge' | 'link-local';

/** One address or name of this machine, with whether a phone can use it and why. */
export interface AddressCandidate {
  readonly host: string;
  readonly interface: string | null;
  readonly kind: CandidateKind;
  /** False: a phone can never reach it; `note` says why. */
  readonly usable: boolean;
  readonly note: string;
}

/** The candidates, best first; `chosen` is the first usable one (null when none is). */
export interface AddressChoice {
  readonly chosen: AddressCandidate | null;
  readonly candidates: readonly AddressCandidate[];
}

/** Interfaces made for containers and VMs on this machine: only this machine reaches them. */
const CONTAINER_NAME = /^(docker|br-|veth|virbr|cni|flannel|podman|cali|cilium|lxcbr|lxdbr|kube-bridge|vboxnet|vmnet|weave|vnet)/;
/** Tunnel interfaces: a VPN's own network, not the one the phone is on. */
const VPN_NAME = /^(wg|tun|utun|ppp|ipsec|zt|nordlynx|tailscale)/;

/** 100.64.0.0/10 (IPv4) or fd7a:115c:a1e0::/48 (IPv6): Tailscale's ranges. */
export function isTailscaleAddress(address: string): boolean {
  const v4 = /^100\.(\d+)\./.exec(address);
  if (v4) return Number(v4[1]) >= 64 && Number(v4[1]) <= 127;
  return /^fd7a:115c:a1e0:/i.test(address);
}

/** fe80::/10 and 169.254.0.0/16: valid on one link only, and needing a zone a URL cannot carry well. */
function isLinkLocal(address: string): boolean {
  return /^fe[89ab][0-9a-f]:/i.test(address) || /^169\.254\./.test(address);
}

interface Ranked {
  readonly candidate: AddressCandidate;
  /** Lower is better. */
  readonly tier: number;
  readonly ipv6: boolean;
}

/** Classifies one interface address; the tier orders the usable ones. */
function rankAddress(facts: NetFacts, nic: NetInterface, address: string, family: 'IPv4' | 'IPv6', listening: Listening): Ranked {
  const ipv6 = family === 'IPv6';
  const at = (kind: CandidateKind, tier: number, usable: boolean, note: string): Ranked => ({
    candidate: { host: address, interface: nic.name, kind, usable, note },
    tier,
    ipv6,
  });
  // Either family's default route makes the interface the one the machine is reached by.
  const onDefault = facts.defaultRoutes.some((r) => r.interface === nic.name);
  const phone = facts.tailscale?.phonePeer === true;
  if (CONTAINER_NAME.test(nic.name)) return at('bridge', 99, false, 'an interface for containers or VMs: only this machine reaches it');
  if (isLinkLocal(address)) return at('link-local', 99, false, 'link-local: valid on one link only');
  if (nic.isBridge === true && !onDefault)
    return at('bridge', 99, false, 'a bridge without the default route (containers or VMs): a phone cannot reach it');
  if ((ipv6 && !listening.ipv6) || (!ipv6 && !listening.ipv4))
    return at('lan', 99, false, `tether does not listen on ${family} (bindAddress)`);
  if (isTailscaleAddress(address) || nic.name.startsWith('tailscale') || facts.tailscale?.ips.includes(address))
    return at('tailscale', phone ? 1 : 6, true, phone ? 'Tailscale: a phone is on this tailnet' : 'Tailscale: only devices on the tailnet');
  if (VPN_NAME.test(nic.name)) return at('vpn', 7, true, 'a VPN tunnel: only devices on that VPN');
  if (onDefault) return at('lan', 3, true, 'on the default route');
  if (nic.hasDevice === false) return at('lan', 5, true, 'a virtual interface without the default route');
  return at('lan', 4, true, 'a network interface without the default route');
}

/** The names: MagicDNS and mDNS, placed by what they stand for. */
function rankNames(facts: NetFacts, addresses: readonly Ranked[], listening: Listening): Ranked[] {
  const out: Ranked[] = [];
  const ts = facts.tailscale;
  if (ts?.dnsName) {
    // tailscaled answers from any network namespace: its addresses must be on an interface here.
    const here = ts.ips.filter((ip) => facts.interfaces.some((nic) => nic.addresses.some((a) => a.address === ip)));
    const reachable = here.some((ip) => (isIP(ip) === 6 ? listening.ipv6 : listening.ipv4));
    const note =
      here.length === 0
        ? 'Tailscale: its addresses are on no interface of this network'
        : !reachable
          ? 'Tailscale: tether does not listen on its addresses (bindAddress)'
          : ts.phonePeer
            ? 'Tailscale MagicDNS name: a phone is on this tailnet; works wherever the phone is'
            : 'Tailscale MagicDNS name: only devices on the tailnet';
    out.push({
      candidate: { host: ts.dnsName, interface: null, kind: 'magicdns', usable: reachable, note },
      tier: reachable ? (ts.phonePeer ? 0 : 6) : 99,
      ipv6: false,
    });
  }
  // The mDNS name follows the LAN address it stands for, and is only worth it when there is one.
  const lan = addresses.some((r) => r.candidate.usable && r.candidate.kind === 'lan' && r.tier === 3);
  if (facts.mdnsName !== null && lan) {
    out.push({
      candidate: {
        host: facts.mdnsName,
        interface: null,
        kind: 'mdns',
        usable: true,
        note: 'mDNS name: on the same network, survives address changes',
      },
      tier: 2,
      ipv6: false,
    });
  }
  return out;
}

/**
 * Ranks this machine's addresses and names for a phone: a Tailscale name when a phone is on the
 * tailnet, then the mDNS name, then the address on the default route, then other real
 * interfaces, then Tailscale and VPN addresses; IPv4 before IPv6 within a rank, else the OS's
 * order. Bridges, veths and link-local addresses are listed last and never chosen.
 */
export function rankAddresses(facts: NetFacts, listening: Listening): AddressChoice {
  const addresses: Ranked[] = [];
  for (const nic of facts.interfaces) {
    for (const a of nic.addresses) if (!a.internal) addresses.push(rankAddress(facts, nic, a.address, a.family, listening));
  }
  const all = [...rankNames(facts, addresses, listening), ...addresses];
  // Array.prototype.sort is stable: equal ranks keep the OS's order.
  const sorted = all.sort(
    (a, b) => a.tier - b.tier || Number(a.ipv6) - Number(b.ipv6) || defaultMetric(facts, a) - defaultMetric(facts, b),
  );
  const candidates = sorted.map((r) => r.candidate);
  return { chosen: candidates.find((c) => c.usable) ?? null, candidates };
}

/** Among default-route interfaces, the lower metric first (the one the OS prefers). */
function defaultMetric(facts: NetFacts, r: Ranked): number {
  const name = r.candidate.interface;
  const metrics = facts.defaultRoutes.filter((d) => d.interface === name).map((d) => d.metric);
  return metrics.length > 0 ? Math.min(...metrics) : Number.MAX_SAFE_INTEGER;
}

/** The longest DNS name (RFC 1035). */
const MAX_HOST_NAME = 253;

/**
 * `tether pair --host`: an IPv4 address, an IPv6 address (brackets allowed) or a DNS name, and
 * nothing else; returns it without brackets. Throws a message saying what is wrong otherwise.
 */
export function parseHostFlag(input: string): string {
  const why = hostFlagProblem(input);
  if (why !== null) throw new Error(`--host must be a host name or an IP address, got ${JSON.stringify(input)}: ${why}`);
  const bare = /^\[(.*)\]$/.exec(input)?.[1] ?? input;
  return isIP(bare) !== 0 ? bare : input.replace(/\.$/, '');
}

function hostFlagProblem(input: string): string | null {
  if (input.trim() === '') return 'it is empty';
  if (/\s/.test(input) || hasControlChar(input)) return 'it holds a space or a control character';
  if (input.includes('%')) return 'a zone (%) cannot be put in a URL; use a global address or a name';
  const bare = /^\[(.*)\]$/.exec(input)?.[1] ?? input;
  if (isIP(bare) !== 0) return null;
  if (/:\d+$/.test(input)) return 'it holds a port (the port comes from the running daemon, bindAddress or publicBaseUrl)';
  if (input.length > MAX_HOST_NAME) return `it is longer than ${MAX_HOST_NAME} characters`;
  const labels = input.replace(/\.$/, '').split('.');
  const label = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
  if (!labels.every((l) => label.test(l))) return 'a host name is letters, digits, "-" and "_" in dot-separated labels of at most 63';
  return null;
}
