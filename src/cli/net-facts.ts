/**
 * Gathers the facts `tether pair` ranks addresses by (pair-address.ts): the interfaces with what
 * sysfs says about them, the default routes (/proc/net/route and /proc/net/ipv6_route, else
 * `ip -j route`; `route -n get` on macOS), Tailscale's own view (`tailscale status --json`) and
 * whether an mDNS responder publishes `<hostname>.local`.
 *
 * Programs run with an argv array, never a shell, each with a short timeout; one that is
 * missing or fails only leaves its fact out. The parsers are exported for the unit tests.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname as osHostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { DefaultRoute, NetFacts, NetInterface, TailscaleSelf } from './pair-address.js';

/** How long one helper program may take before its fact is left out. */
const PROGRAM_TIMEOUT_MS = 3000;
/** The most output read from one helper program (`tailscale status --json` on a big tailnet). */
const PROGRAM_MAX_BYTES = 4 * 1024 * 1024;
const RTF_UP = 0x1;
const RTF_REJECT = 0x200;

/** Runs a program (argv only); its stdout, or null when it is missing, fails or takes too long. */
function run(file: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: PROGRAM_TIMEOUT_MS, maxBuffer: PROGRAM_MAX_BYTES, windowsHide: true }, (err, stdout) =>
      resolve(err ? null : stdout),
    );
  });
}

const readText = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** IPv4 default routes from /proc/net/route (destination and mask 0, up). */
export function parseProcRoute(text: string): DefaultRoute[] {
  const out: DefaultRoute[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [iface, dest, , flags, , , metric, mask] = f as [string, string, string, string, string, string, string, string];
    if (dest !== '00000000' || mask !== '00000000') continue;
    const fl = parseInt(flags, 16);
    if ((fl & RTF_UP) === 0 || (fl & RTF_REJECT) !== 0) continue;
    out.push({ interface: iface, family: 'IPv4', metric: Number(metric) });
  }
  return out;
}

/** IPv6 default routes from /proc/net/ipv6_route (::/0, up, not the kernel's reject route on lo). */
export function parseProcIpv6Route(text: string): DefaultRoute[] {
  const out: DefaultRoute[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [dest, plen, , , , metric, , , flags, iface] = f as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (!/^0{32}$/.test(dest) || plen !== '00' || iface === 'lo') continue;
    const fl = parseInt(flags, 16);
    if ((fl & RTF_UP) === 0 || (fl & RTF_REJECT) !== 0) continue;
    out.push({ interface: iface, family: 'IPv6', metric: parseInt(metric, 16) });
  }
  return out;
}

/** `ip -j [-6] route show default`. */
export function parseIpRouteJson(text: string, family: 'IPv4' | 'IPv6'): DefaultRoute[] {
  try {
    const routes = JSON.parse(text) as { dst?: string; dev?: string; metric?: number; type?: string }[];
    if (!Array.isArray(routes)) return [];
    return routes
      .filter((r) => r.dst === 'default' && typeof r.dev === 'string' && (r.type === undefined || r.type === 'unicast'))
      .map((r) => ({ interface: r.dev!, family, metric: typeof r.metric === 'number' ? r.metric : 0 }));
  } catch {
    return [];
  }
}

/** macOS `route -n get [-inet6] default`: its `interface:` line. */
export function parseMacRoute(text: string, family: 'IPv4' | 'IPv6'): DefaultRoute[] {
  const m = /^\s*interface:\s*(\S+)\s*$/m.exec(text);
  return m ? [{ interface: m[1]!, family, metric: 0 }] : [];
}

/** `tailscale status --json`: null unless Tailscale is running. */
export function parseTailscaleStatus(text: string): TailscaleSelf | null {
  try {
    const s = JSON.parse(text) as {
      BackendState?: string;
      Self?: { DNSName?: string; TailscaleIPs?: string[] };
      Peer?: Record<string, { OS?: string }>;
    };
    if (s.BackendState !== 'Running' || !s.Self) return null;
    const dnsName = typeof s.Self.DNSName === 'string' && s.Self.DNSName !== '' ? s.Self.DNSName.replace(/\.$/, '') : null;
    const ips = Array.isArray(s.Self.TailscaleIPs) ? s.Self.TailscaleIPs.filter((ip) => typeof ip === 'string') : [];
    const phonePeer = Object.values(s.Peer ?? {}).some((p) => /^(ios|android)$/i.test(p?.OS ?? ''));
    return { dnsName, ips, phonePeer };
  } catch {
    return null;
  }
}

/** The interfaces, with sysfs's word on bridges and hardware where there is a sysfs. */
function gatherInterfaces(linux: boolean): NetInterface[] {
  return Object.entries(networkInterfaces()).map(([name, list]) => ({
    name,
    addresses: (list ?? []).map((a) => ({ address: a.address, family: a.family, internal: a.internal })),
    // Kernel interface names hold no "/", so the path stays inside /sys/class/net.
    isBridge: linux ? existsSync(`/sys/class/net/${name}/bridge`) : null,
    hasDevice: linux ? existsSync(`/sys/class/net/${name}/device`) : null,
  }));
}

async function gatherDefaultRoutes(platform: NodeJS.Platform): Promise<DefaultRoute[]> {
  if (platform === 'darwin') {
    const [v4, v6] = await Promise.all([run('route', ['-n', 'get', 'default']), run('route', ['-n', 'get', '-inet6', 'default'])]);
    return [...parseMacRoute(v4 ?? '', 'IPv4'), ...parseMacRoute(v6 ?? '', 'IPv6')];
  }
  const v4 = readText('/proc/net/route');
  const v6 = readText('/proc/net/ipv6_route');
  if (v4 !== null || v6 !== null) return [...parseProcRoute(v4 ?? ''), ...parseProcIpv6Route(v6 ?? '')];
  const [j4, j6] = await Promise.all([run('ip', ['-j', 'route', 'show', 'default']), run('ip', ['-j', '-6', 'route', 'show', 'default'])]);
  return [...parseIpRouteJson(j4 ?? '[]', 'IPv4'), ...parseIpRouteJson(j6 ?? '[]', 'IPv6')];
}

/**
 * avahi runs and answers on this network: its socket exists and its process is in our network
 * namespace (a responder outside it publishes the name on another network). When the namespace
 * cannot be read (another user's process), it is taken to be ours.
 */
function avahiHere(): boolean {
  const dir = ['/run/avahi-daemon', '/var/run/avahi-daemon'].find((d) => existsSync(join(d, 'socket')));
  if (dir === undefined) return false;
  const pid = Number(readText(join(dir, 'pid'))?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    return readlinkSync(`/proc/${pid}/ns/net`) === readlinkSync('/proc/self/ns/net');
  } catch {
    return true;
  }
}

/** `<hostname>.local` when an mDNS responder publishes it here (avahi; always on macOS). */
function mdnsName(platform: NodeJS.Platform, host: string): string | null {
  const responder = platform === 'darwin' || (platform === 'linux' && avahiHere());
  if (!responder || host === '') return null;
  return /\.local$/i.test(host) ? host : `${host.split('.')[0]}.local`;
}

/** The facts, gathered now. */
export async function gatherNetFacts(platform: NodeJS.Platform = process.platform): Promise<NetFacts> {
  const host = osHostname();
  const [defaultRoutes, tailscale] = await Promise.all([
    gatherDefaultRoutes(platform),
    run('tailscale', ['status', '--json']).then((out) => (out === null ? null : parseTailscaleStatus(out))),
  ]);
  return {
    hostname: host,
    interfaces: gatherInterfaces(platform === 'linux'),
    defaultRoutes,
    tailscale,
    mdnsName: mdnsName(platform, host),
  };
}
