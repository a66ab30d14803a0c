/**
 * What each device's Live Activity may spend (docs/push.md "Live Activity"): timestamps that
 * always increase, and the hourly cap of priority-10 updates. One per device.
 *
 * Invariants: `timestamp()` is strictly greater than every earlier one of the device, even within
 * one second (iOS drops an update older than the last: max(now, last + 1)); at most
 * MAX_URGENT_PER_HOUR updates go at priority 10 in any 60 minutes.
 */

/** Priority-10 updates a device gets in any hour; past it, changes go at priority 5 without alert. */
export const MAX_URGENT_PER_HOUR = 12;
const HOUR_MS = 3600_000;

export class ActivityBudget {
  private last = 0;
  /** When the priority-10 updates of the last hour went (ms), oldest first. */
  private readonly urgent: number[] = [];

  constructor(private readonly now: () => number) {}

  /** The next push's `timestamp`, Unix seconds. */
  timestamp(): number {
    this.last = Math.max(Math.floor(this.now() / 1000), this.last + 1);
    return this.last;
  }

  /** Takes one priority-10 update from the hour's budget; false when it is spent. */
  takeUrgent(): boolean {
    const now = this.now();
    while (this.urgent.length > 0 && this.urgent[0]! <= now - HOUR_MS) this.urgent.shift();
    if (this.urgent.length >= MAX_URGENT_PER_HOUR) return false;
    this.urgent.push(now);
    return true;
  }
}
