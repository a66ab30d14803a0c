/**
 * The daemon's mDNS advertisement over its run (docs/pairing.md "Finding the daemon again"): not
 * started when the plan says why not, or when the daemon serves no TLS of its own; else started
 * once, when the daemon listens, and withdrawn (goodbye packets) when it stops.
 */
import type { Logger } from '../log.js';
import type { Advertisement } from './advertisement.js';
import { MdnsAdvertiser, type MdnsStatus } from './advertiser.js';

export class Advertising {
  private advertiser: MdnsAdvertiser | null = null;

  /** `off`: why the daemon is not advertised, or null when it is. */
  constructor(
    private readonly off: string | null,
    private readonly log: Logger,
  ) {}

  /** Advertises `adOf(fingerprint)` when the plan says so and the daemon has a TLS fingerprint; only the first call does. */
  advertise(fingerprint: string | null, adOf: (fingerprint: string) => Advertisement): void {
    if (this.off !== null || fingerprint === null || this.advertiser) return;
    this.advertiser = new MdnsAdvertiser({ ad: adOf(fingerprint), log: this.log });
    this.advertiser.start();
  }

  /** The advertiser's status; before it starts, `starting`, or `off` with the plan's reason. */
  status(): MdnsStatus {
    return this.advertiser?.status() ?? { state: this.off === null ? 'starting' : 'off', reason: this.off, instance: null };
  }

  /** Withdraws the advertisement (goodbye packets); nothing when none was made. */
  async stop(): Promise<void> {
    await this.advertiser?.stop();
  }
}
