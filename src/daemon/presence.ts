/**
 * The daemon's presence, wired (docs/pairing.md "Which daemon is which", "Finding the daemon
 * again"): who it is, its id (made once, kept in the data dir) and its name (config `name`, else
 * the host name), for `/health`, the run file and pairing; and its mDNS advertisement, started
 * once it listens when it should be (`mdnsPlan`), withdrawn when it stops. Part of the
 * composition root: it only connects parts made elsewhere.
 */
import { DaemonId, daemonName, mdnsPlan } from '../auth/presence.js';
import type { TetherConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { advertisementOf } from '../mdns/advertisement.js';
import type { MdnsStatus } from '../mdns/advertiser.js';
import { Advertising } from '../mdns/advertising.js';
import { refusingStoreIo } from './fail.js';

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

export function hostPresence(deps: {
  config: TetherConfig;
  dataDir: string;
  bindHost: string;
  tls: boolean;
  version: string;
  log: Logger;
}): HostPresence {
  // Read now, so a broken file is the start's refusal; made only once the port is held.
  const daemonId = new DaemonId(deps.dataDir, refusingStoreIo);
  const name = daemonName(deps.config);
  const advertising = new Advertising(mdnsPlan(deps.config, deps.bindHost, deps.tls), deps.log);
  return {
    get id() {
      return daemonId.id;
    },
    name,
    keep: () => daemonId.keep(),
    advertise: (address, port, fingerprint) =>
      advertising.advertise(fingerprint, (print) =>
        advertisementOf({ id: daemonId.id, name, version: deps.version, fingerprint: print, address, port }),
      ),
    report: () => ({ id: daemonId.id, name, mdns: advertising.status() }),
    stop: () => advertising.stop(),
  };
}
