/**
 * `tether pair [--json]` (docs/pairing.md): makes a pairing token (5 minutes,
 * single use) and prints the QR code a phone scans, with the same pairing URL as text under it:
 * `tether://<host>:<port>?pair=<pairing token>&fp=<fingerprint>&name=<sidecar name>&id=<daemon id>`.
 *
 * The host and port are the ones a phone can reach: `--host` or `publicBaseUrl` when given, else
 * the address the running daemon is bound to (its run file), else `bindAddress`; a daemon bound
 * to every interface gets the best of this machine's addresses (pair-address.ts), and all of
 * them are listed under the code with the reason for each. A loopback address is printed anyway
 * (a phone on the same machine's simulator can use it) with a warning saying what to set.
 * Warnings go to stderr; `--json` prints one object on stdout for scripts.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'clipanion';
import { CERT_FILE, KEY_FILE, loadCertificate } from '../auth/certificate.js';
import { ensureIdentity } from '../auth/identity.js';
import { PAIRING_TTL_MS, PairingStore } from '../auth/pairing-store.js';
import { loadConfig, parseBindAddress } from '../config/load.js';
import { resolvePaths, type TetherPaths } from '../config/paths.js';
import { isLoopback, type TetherConfig } from '../config/schema.js';
import { CliError, reportFailure } from '../runtime/fail.js';
import { gatherNetFacts } from './net-facts.js';
import { parseHostFlag, rankAddresses, type AddressCandidate, type NetFacts } from './pair-address.js';
import { readRunFile, type RunFile } from '../runtime/run-file.js';

/** What the QR carries. */
export interface PairingTarget {
  readonly host: string;
  readonly port: number;
  /** SHA-256 of the certificate DER (null when tether serves plain http behind a proxy). */
  readonly fingerprint: string | null;
  readonly name: string;
  /** The daemon's id (docs/pairing.md "Which daemon is which"): the phone knows it by this at any address. */
  readonly id: string;
  /** The phone must use plain http/ws (tls = false and no https publicBaseUrl). */
  readonly plainHttp: boolean;
}

/** The pairing URL (docs/pairing.md "`tether pair`"); `scheme=http` is added only when the phone must not use TLS. */
export function pairingUrl(target: PairingTarget, pairingToken: string): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  const q = new URLSearchParams({ pair: pairingToken });
  if (target.fingerprint !== null) q.set('fp', target.fingerprint);
  q.set('name', target.name);
  q.set('id', target.id);
  if (target.plainHttp) q.set('scheme', 'http');
  return `tether://${host}:${target.port}?${q.toString()}`;
}

/** Where the QR's host came from. */
export type HostSource = 'host-flag' | 'publicBaseUrl' | 'bindAddress' | 'interfaces' | 'hostname';

/** What `tether pair` shows: the target, where its host came from, and this machine's addresses. */
export interface PairingPlan {
  readonly target: PairingTarget;
  readonly hostFrom: HostSource;
  /** Best first; empty unless the daemon listens on every interface. */
  readonly candidates: readonly AddressCandidate[];
  readonly chosen: AddressCandidate | null;
  readonly warnings: readonly string[];
}

/** `--host` (already checked) and the gathering of network facts (tests give their own). */
export interface PairingOptions {
  readonly host: string | null;
  readonly facts: () => Promise<NetFacts>;
}

/** The certificate fingerprint the phone pins, and the daemon's name and id. */
function identity(
  config: TetherConfig,
  paths: TetherPaths,
  run: RunFile | null,
  warnings: string[],
): { fingerprint: string | null; name: string; id: string } {
  const name = run?.name || config.name || hostname();
  // The daemon made the id at its start; one from before ids has it in the same data dir.
  const id = run?.id ?? ensureIdentity(paths.dataDir).id;
  if (run) return { fingerprint: run.fingerprint, name, id };
  warnings.push('tether is not running: the phone can pair once "tether serve" runs (within 5 minutes)');
  if (!config.tls) return { fingerprint: null, name, id };
  try {
    return { fingerprint: loadCertificate(join(paths.tlsDir, CERT_FILE), join(paths.tlsDir, KEY_FILE)).fingerprint, name, id };
  } catch {
    throw new CliError('there is no TLS certificate yet: start "tether serve" once, then pair');
  }
}

/** The target behind `publicBaseUrl` (a tunnel or proxy), with `--host` in place of its host when given. */
function publicTarget(
  config: TetherConfig,
  hostFlag: string | null,
  { fingerprint, name, id }: { fingerprint: string | null; name: string; id: string },
  warnings: string[],
): PairingTarget {
  const u = new URL(config.publicBaseUrl);
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  // Without TLS of its own, tether sits behind a proxy whose certificate the phone checks as usual.
  const fp = config.tls ? fingerprint : null;
  if (hostFlag !== null && fp === null && u.protocol === 'https:')
    warnings.push(`the phone checks the proxy's certificate, which must name ${hostFlag}`);
  return { host: hostFlag ?? u.hostname.replace(/^\[|\]$/g, ''), port, fingerprint: fp, name, id, plainHttp: u.protocol === 'http:' };
}

/**
 * Where the phone should connect, and what is wrong with it (warnings). The host is `--host`,
 * else publicBaseUrl's, else the bound address; a wildcard bind is replaced by the best of this
 * machine's addresses (pair-address.ts). The certificate need not name the host: the phone pins
 * its fingerprint.
 */
export async function pairingTarget(config: TetherConfig, paths: TetherPaths, opts: PairingOptions): Promise<PairingPlan> {
  const warnings: string[] = [];
  const run = readRunFile(paths.runDir);
  const who = identity(config, paths, run, warnings);
  const { fingerprint, name, id } = who;
  const bind = parseBindAddress(config.bindAddress);
  const boundHost = run?.host ?? bind.host;
  const wildcard = boundHost === '0.0.0.0' || boundHost === '::';
  // Only a daemon listening on every interface has addresses to choose from.
  const ranked = wildcard ? rankAddresses(await opts.facts(), { ipv4: true, ipv6: boundHost !== '0.0.0.0' }) : null;
  const candidates = ranked?.candidates ?? [];
  if (config.publicBaseUrl !== '') {
    const target = publicTarget(config, opts.host, who, warnings);
    return { target, hostFrom: opts.host !== null ? 'host-flag' : 'publicBaseUrl', candidates, chosen: null, warnings };
  }
  const port = run?.port ?? bind.port;
  if (port === 0) throw new CliError(`tether is not running and bindAddress in ${paths.configFile} has port 0: start "tether serve" first`);
  const target = (host: string): PairingTarget => ({
    host,
    port,
    fingerprint: config.tls ? fingerprint : null,
    name,
    id,
    plainHttp: !config.tls,
  });
  if (opts.host !== null) {
    if (!wildcard && opts.host !== boundHost)
      warnings.push(`tether listens on ${boundHost} only: ${opts.host} reaches it only if it is that address`);
    return { target: target(opts.host), hostFrom: 'host-flag', candidates, chosen: null, warnings };
  }
  if (wildcard && ranked?.chosen)
    return { target: target(ranked.chosen.host), hostFrom: 'interfaces', candidates, chosen: ranked.chosen, warnings };
  if (wildcard) {
    warnings.push(
      `no address of this machine looks reachable from a phone: the QR carries the host name; pass --host <name or address> or set publicBaseUrl in ${paths.configFile}`,
    );
    return { target: target(hostname()), hostFrom: 'hostname', candidates, chosen: null, warnings };
  }
  if (isLoopback(boundHost)) {
    warnings.push(
      `tether listens on ${boundHost} only: a phone cannot reach it. Set publicBaseUrl (a tunnel or reverse proxy URL) or bindAddress = "0.0.0.0:${port}" in ${paths.configFile}, restart tether, and pair again`,
    );
  }
  return { target: target(boundHost), hostFrom: 'bindAddress', candidates, chosen: null, warnings };
}

const FROM: Record<HostSource, string> = {
  'host-flag': '--host',
  publicBaseUrl: 'publicBaseUrl',
  bindAddress: 'bindAddress: tether listens there only',
  interfaces: 'the best of the addresses below',
  hostname: 'the host name: no address below looks reachable',
};

/** The lines under the QR: what it carries and why, and the other addresses to pass to --host. */
export function describePlan(plan: PairingPlan): string {
  const lines = [`The code carries ${plan.target.host} (${FROM[plan.hostFrom]}).`];
  if (plan.candidates.length > 0) {
    const width = Math.max(...plan.candidates.map((c) => c.host.length));
    const ifWidth = Math.max(...plan.candidates.map((c) => (c.interface ?? '').length));
    lines.push("This machine's addresses, best first (* = in the code):");
    for (const c of plan.candidates) {
      const mark = c === plan.chosen ? '*' : c.usable ? ' ' : 'x';
      lines.push(`  ${mark} ${c.host.padEnd(width)}  ${(c.interface ?? '').padEnd(ifWidth)}  ${c.note}`);
    }
    lines.push('Another one: tether pair --host <name or address>');
  }
  return lines.join('\n') + '\n';
}

function checkHostFlag(input: string): string {
  try {
    return parseHostFlag(input);
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
}

export class PairCommand extends Command {
  static override paths = [['pair']];
  static override usage = Command.Usage({
    description: 'Pair a phone: print a QR code with a pairing token valid for 5 minutes, once',
    details: `
      The phone scans the code, pins the certificate fingerprint it carries, and exchanges the
      pairing token for its own permanent token (POST /pair). The same pairing URL is printed
      as text under the code. When tether listens on every interface, the code carries the best
      of this machine's addresses (the default route's, a Tailscale or mDNS name; never a
      container bridge) and lists the others; --host puts a name or address of your choosing
      in the code instead. With --json, one JSON object is printed instead, for scripts.
    `,
    examples: [
      ['Pair a phone', 'tether pair'],
      ['Pairing data for a script', 'tether pair --json'],
      ['Put a name of your own in the code', 'tether pair --host devbox.example.net'],
    ],
  });

  json = Option.Boolean('--json', false, { description: 'Print the pairing data as JSON instead of the QR code' });
  host = Option.String('--host', {
    description: 'The host name or IP address the phone connects to (overrides the choice and publicBaseUrl)',
  });

  async execute(): Promise<number> {
    try {
      const env = process.env;
      const paths = resolvePaths(env);
      const { config } = await loadConfig(paths, env);
      // Checked before anything is made: a bad --host leaves no pairing token behind.
      const host = this.host === undefined ? null : checkHostFlag(this.host);
      const plan = await pairingTarget(config, paths, { host, facts: () => gatherNetFacts() });
      const { target, warnings } = plan;
      const { token, expiresAt } = new PairingStore(paths.authDir).create();
      const url = pairingUrl(target, token);
      if (this.json) {
        const candidates = plan.candidates.map((c) => ({ ...c, chosen: c === plan.chosen }));
        const out = {
          url,
          pairingToken: token,
          expiresAt: new Date(expiresAt).toISOString(),
          ...target,
          hostFrom: plan.hostFrom,
          candidates,
          warnings,
        };
        this.context.stdout.write(JSON.stringify(out, null, 2) + '\n');
        return 0;
      }
      for (const w of warnings) this.context.stderr.write(`tether: warning: ${w}\n`);
      const { renderQr } = await import('./qr.js');
      this.context.stdout.write(renderQr(url));
      this.context.stdout.write(`\n${url}\n\nScan it with the tether app within ${PAIRING_TTL_MS / 60_000} minutes; it works once.\n`);
      if (target.fingerprint) this.context.stdout.write(`Certificate fingerprint (SHA-256): ${target.fingerprint}\n`);
      this.context.stdout.write(`\n${describePlan(plan)}`);
      return 0;
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }
}
