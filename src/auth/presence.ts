/**
 * Who the daemon is and whether it is found on the local network (docs/pairing.md "Which daemon
 * is which", "Finding the daemon again"): its name, its id (made once, kept in the data dir) and
 * the rule for advertising it over mDNS.
 */
import { hostname } from 'node:os';
import { isLoopback, type TetherConfig } from '../config/schema.js';
import { ensureIdentity, readIdentity } from './identity.js';

/** The daemon's name: config `name`, else the host name. */
export function daemonName(config: TetherConfig): string {
  return config.name || hostname();
}

/**
 * Whether the daemon is advertised on the local network: only with `[discovery] mdns` on, bound to
 * an address other devices reach, and serving TLS itself (a phone pins the certificate the TXT
 * names; a plain http daemon sits behind a proxy the phone reaches instead). Null = advertised;
 * else the reason, for `/health`.
 */
export function mdnsPlan(config: TetherConfig, bindHost: string, tls: boolean): string | null {
  if (!config.discovery.mdns) return 'off in the config ([discovery] mdns = false)';
  if (isLoopback(bindHost)) return `tether listens on ${bindHost}, which no other device reaches (bindAddress)`;
  if (!tls) return 'tls = false: a daemon serving plain http is not advertised (phones reach it through its TLS proxy)';
  return null;
}

/**
 * The daemon's id: the kept one is read at once (a broken file is the start's refusal); on a first
 * start it is made only by `keep`, once the port is held (a refused start changes no file).
 * `settle` runs each read and write of the file (the daemon turns its failures into refusals).
 */
export class DaemonId {
  private known: string | null;

  constructor(
    private readonly dataDir: string,
    private readonly settle: <T>(read: () => T) => T = (read) => read(),
  ) {
    this.known = settle(() => readIdentity(dataDir))?.id ?? null;
  }

  /** The id; asking before `keep` on a first start is a bug, and throws. */
  get id(): string {
    if (this.known === null) throw new Error("the daemon's id is asked before the port is held");
    return this.known;
  }

  /** Makes the id on a first start (0600, once; a `tether pair` that made it meanwhile wins, and its id is the one used). */
  keep(): void {
    this.known ??= this.settle(() => ensureIdentity(this.dataDir)).id;
  }
}
