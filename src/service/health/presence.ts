/**
 * The daemon's presence (docs/pairing.md "Which daemon is which", "Finding the daemon
 * again"): who it is, its id (made once, kept in the data dir) and its name (config `name`, else
 * the host name), for `/health`, the run file and pairing; and its mDNS advertisement, started
 * once it listens when it should be (`mdnsPlan`), withdrawn when it stops. A broken
 * id file is the start's refusal (`store-io`, one line).
 */
import { hostname } from 'node:os';
import { ensureIdentity, readIdentity } from '../../auth/identity.js';
import { isLoopback, type TetherConfig } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { advertisementOf } from '../../mdns/advertisement.js';
import { MdnsAdvertiser, type MdnsStatus } from '../../mdns/advertiser.js';

/** Who the daemon is, and its advertisement, as `/health` shows them. */
export interface PresenceReport {
  readonly id: string;
  readonly name: string;
  readonly mdns: MdnsStatus;
}

export interface HostPresence {
  /** The id: the kept one; on a first start, known once `keep` has made it (the port is held). */
  readonly id: string;
  readonly name: string;
  /**
   * Once the port is held: makes the id on a first start (0600, once; a `tether pair` that made it
   * meanwhile wins, and its id is the one used). Before, nothing is written (a refused start
   * changes no file).
   */
  readonly keep: () => void;
  /** Once the daemon listens at `address:port`: advertises it, when the plan says so. */
  readonly advertise: (address: string, port: number, fingerprint: string | null) => void;
  readonly report: () => PresenceReport;
  /** Withdraws the advertisement (goodbye packets). */
  readonly stop: () => Promise<void>;
}

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

export function hostPresence(deps: {
  config: TetherConfig;
  dataDir: string;
  bindHost: string;
  tls: boolean;
  version: string;
  log: Logger;
}): HostPresence {
  // Read now, so a broken file is the start's refusal; made only once the port is held.
  let id: string | null = readIdentity(deps.dataDir)?.id ?? null;
  const idNow = (): string => {
    if (id === null) throw new Error("the daemon's id is asked before the port is held");
    return id;
  };
  const name = daemonName(deps.config);
  const off = mdnsPlan(deps.config, deps.bindHost, deps.tls);
  let advertiser: MdnsAdvertiser | null = null;
  return {
    get id() {
      return idNow();
    },
    name,
    keep: () => {
      id ??= ensureIdentity(deps.dataDir).id;
    },
    advertise: (address, port, fingerprint) => {
      if (off !== null || fingerprint === null || advertiser) return;
      const ad = advertisementOf({ id: idNow(), name, version: deps.version, fingerprint, address, port });
      advertiser = new MdnsAdvertiser({ ad, log: deps.log });
      advertiser.start();
    },
    report: () => ({
      id: idNow(),
      name,
      mdns: advertiser?.status() ?? { state: off === null ? 'starting' : 'off', reason: off, instance: null },
    }),
    stop: async () => advertiser?.stop(),
  };
}
