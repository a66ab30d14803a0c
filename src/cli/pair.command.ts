/**
 * `tether pair [--json]` (docs/pairing.md): makes a pairing token (5 minutes,
 * single use) and prints the QR code a phone scans, with the same pairing URL as text under it:
 * `tether://<host>:<port>?pair=<pairing token>&fp=<fingerprint>&name=<sidecar name>`.
 *
 * The host and port are the ones a phone can reach: `publicBaseUrl` when set, else the address
 * the running daemon is bound to (its run file), else `bindAddress`. A loopback address is
 * printed anyway (a phone on the same machine's simulator can use it) with a warning saying what
 * to set. Warnings go to stderr; `--json` prints one object on stdout for scripts.
 */
import { networkInterfaces, hostname } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'clipanion';
import { CERT_FILE, KEY_FILE, loadCertificate } from '../auth/certificate.js';
import { PAIRING_TTL_MS, PairingStore } from '../auth/pairing-store.js';
import { loadConfig, parseBindAddress } from '../config/load.js';
import { resolvePaths, type TetherPaths } from '../config/paths.js';
import { isLoopback, type TetherConfig } from '../config/schema.js';
import { CliError, reportFailure } from './fail.js';
import { readRunFile } from './run-file.js';

/** What the QR carries. */
export interface PairingTarget {
  readonly host: string;
  readonly port: number;
  /** SHA-256 of the certificate DER (null when tether serves plain http behind a proxy). */
  readonly fingerprint: string | null;
  readonly name: string;
  /** The phone must use plain http/ws (tls = false and no https publicBaseUrl). */
  readonly plainHttp: boolean;
}

/** The pairing URL (docs/pairing.md "`tether pair`"); `scheme=http` is added only when the phone must not use TLS. */
export function pairingUrl(target: PairingTarget, pairingToken: string): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  const q = new URLSearchParams({ pair: pairingToken });
  if (target.fingerprint !== null) q.set('fp', target.fingerprint);
  q.set('name', target.name);
  if (target.plainHttp) q.set('scheme', 'http');
  return `tether://${host}:${target.port}?${q.toString()}`;
}

/** An address of this machine that another device on the network can reach, if any. */
function lanAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return hostname();
}

/** Where the phone should connect, and what is wrong with it (warnings). */
export function pairingTarget(config: TetherConfig, paths: TetherPaths): { target: PairingTarget; warnings: string[] } {
  const warnings: string[] = [];
  const run = readRunFile(paths.runDir);
  const name = run?.name || config.name || hostname();
  let fingerprint = run?.fingerprint ?? null;
  if (!run) {
    warnings.push('tether is not running: the phone can pair once "tether serve" runs (within 5 minutes)');
    if (config.tls) {
      try {
        fingerprint = loadCertificate(join(paths.tlsDir, CERT_FILE), join(paths.tlsDir, KEY_FILE)).fingerprint;
      } catch {
        throw new CliError('there is no TLS certificate yet: start "tether serve" once, then pair');
      }
    }
  }
  if (config.publicBaseUrl !== '') {
    const u = new URL(config.publicBaseUrl);
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    const viaProxy = !config.tls;
    return {
      target: {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port,
        fingerprint: viaProxy ? null : fingerprint,
        name,
        plainHttp: u.protocol === 'http:',
      },
      warnings,
    };
  }
  const bind = parseBindAddress(config.bindAddress);
  const port = run?.port ?? bind.port;
  if (port === 0) throw new CliError(`tether is not running and bindAddress in ${paths.configFile} has port 0: start "tether serve" first`);
  let host = run?.host ?? bind.host;
  if (host === '0.0.0.0' || host === '::') host = lanAddress();
  if (isLoopback(host)) {
    warnings.push(
      `tether listens on ${host} only: a phone cannot reach it. Set publicBaseUrl (a tunnel or reverse proxy URL) or bindAddress = "0.0.0.0:${port}" in ${paths.configFile}, restart tether, and pair again`,
    );
  }
  return { target: { host, port, fingerprint: config.tls ? fingerprint : null, name, plainHttp: !config.tls }, warnings };
}

export class PairCommand extends Command {
  static override paths = [['pair']];
  static override usage = Command.Usage({
    description: 'Pair a phone: print a QR code with a pairing token valid for 5 minutes, once',
    details: `
      The phone scans the code, pins the certificate fingerprint it carries, and exchanges the
      pairing token for its own permanent token (POST /pair). The same pairing URL is printed
      as text under the code. With --json, one JSON object is printed instead, for scripts.
    `,
    examples: [
      ['Pair a phone', 'tether pair'],
      ['Pairing data for a script', 'tether pair --json'],
    ],
  });

  json = Option.Boolean('--json', false, { description: 'Print the pairing data as JSON instead of the QR code' });

  async execute(): Promise<number> {
    try {
      const env = process.env;
      const paths = resolvePaths(env);
      const { config } = await loadConfig(paths, env);
      const { target, warnings } = pairingTarget(config, paths);
      const { token, expiresAt } = new PairingStore(paths.authDir).create();
      const url = pairingUrl(target, token);
      if (this.json) {
        const out = { url, pairingToken: token, expiresAt: new Date(expiresAt).toISOString(), ...target, warnings };
        this.context.stdout.write(JSON.stringify(out, null, 2) + '\n');
        return 0;
      }
      for (const w of warnings) this.context.stderr.write(`tether: warning: ${w}\n`);
      const { renderQr } = await import('./qr.js');
      this.context.stdout.write(renderQr(url));
      this.context.stdout.write(`\n${url}\n\nScan it with the tether app within ${PAIRING_TTL_MS / 60_000} minutes; it works once.\n`);
      if (target.fingerprint) this.context.stdout.write(`Certificate fingerprint (SHA-256): ${target.fingerprint}\n`);
      return 0;
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }
}
