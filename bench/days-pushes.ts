/**
 * The pushes of the days soak, checked against what the agents did (bench/days-agents.ts):
 * every entry into `awaiting-input`, every ask and every stop is an occurrence the daemon must
 * push once to each paired device in the background (docs/push.md), never twice, and not to a
 * device whose phone shows the session.
 *
 * Two devices are paired: one that never connects (always in the background: every occurrence
 * is its), and the sleeping phone, in the background only while asleep. A phone that drops its
 * connection without a close counts as in the foreground until the daemon's keepalive finds the
 * link dead (`ping_interval_s` plus the pong timeout), so an occurrence near a wake or a sleep is
 * not judged either way; one well inside a sleep must be pushed, one well inside a wake must not.
 *
 * Pushes are matched to occurrences per session and kind: an ask by its id; a wait or a stop to
 * the latest of its kind made before the push arrived.
 */
import type { ApnsRequest } from '../testkit/apns-server.js';

type Kind = 'wait' | 'stop' | 'ask';

interface Occurrence {
  readonly t: number;
  readonly kind: Kind;
  readonly id?: string;
  pushes: number;
}

export interface ReceivedPush {
  readonly t: number;
  readonly req: ApnsRequest;
}

export interface DevicePushFigures {
  readonly device: string;
  readonly received: number;
  /** Occurrences the device had to get (in the background for sure), and those it did not get. */
  readonly expected: number;
  readonly missed: number;
  /** Occurrences that got more than one push. */
  readonly doubled: number;
  /** Pushes while the device's phone was in the foreground for sure. */
  readonly whileForeground: number;
  /** Pushes that matched no occurrence. */
  readonly unmatched: number;
  readonly problems: string[];
}

/** When a device is in the background for sure, in the foreground for sure, or neither (near a change). */
export type Presence = (t: number) => 'background' | 'foreground' | 'unsure';

export class PushLedger {
  private readonly bySession = new Map<string, Occurrence[]>();

  private add(session: string, kind: Kind, id?: string): void {
    const list = this.bySession.get(session) ?? [];
    list.push({ t: performance.now(), kind, pushes: 0, ...(id !== undefined ? { id } : {}) });
    this.bySession.set(session, list);
  }

  entered(session: string): void {
    this.add(session, 'wait');
  }

  stopped(session: string): void {
    this.add(session, 'stop');
  }

  asked(session: string, askId: string): void {
    this.add(session, 'ask', askId);
  }

  get occurrences(): number {
    let n = 0;
    for (const l of this.bySession.values()) n += l.length;
    return n;
  }

  /** Checks `pushes` (received, in order) for the device `token`, whose presence is `presence`; occurrences after `until` are not judged missed. */
  check(device: string, token: string, pushes: readonly ReceivedPush[], presence: Presence, until: number): DevicePushFigures {
    const problems: string[] = [];
    const problem = (p: string): void => void (problems.length < 30 && problems.push(p));
    const occ = new Map<string, Occurrence[]>();
    for (const [s, list] of this.bySession)
      occ.set(
        s,
        list.map((o) => ({ ...o, pushes: 0 })),
      );
    let received = 0;
    let whileForeground = 0;
    let unmatched = 0;
    for (const p of pushes) {
      if (p.req.deviceToken !== token) continue;
      received++;
      const payload = p.req.payload as { sessionId?: string; askId?: string; aps?: { alert?: { title?: string } } } | null;
      const session = payload?.sessionId ?? '';
      const title = payload?.aps?.alert?.title ?? '';
      const kind: Kind = payload?.askId !== undefined ? 'ask' : /waiting for you/.test(title) ? 'wait' : 'stop';
      const list = occ.get(session) ?? [];
      const match =
        kind === 'ask'
          ? list.find((o) => o.kind === 'ask' && o.id === payload!.askId)
          : list.filter((o) => o.kind === kind && o.t <= p.t).at(-1);
      if (!match) {
        unmatched++;
        problem(`${device}: a push that matches nothing (${session}: ${title})`);
        continue;
      }
      match.pushes++;
      if (presence(match.t) === 'foreground') {
        whileForeground++;
        problem(`${device}: pushed while in the foreground (${session}: ${title})`);
      }
    }
    let expected = 0;
    let missed = 0;
    let doubled = 0;
    for (const [s, list] of occ) {
      for (const o of list) {
        if (o.pushes > 1) {
          doubled++;
          problem(`${device}: ${o.pushes} pushes for one ${o.kind} of ${s}`);
        }
        if (o.t > until || presence(o.t) !== 'background') continue;
        expected++;
        if (o.pushes === 0) {
          missed++;
          problem(`${device}: no push for a ${o.kind} of ${s} at ${(o.t / 1000).toFixed(0)} s`);
        }
      }
    }
    return { device, received, expected, missed, doubled, whileForeground, unmatched, problems };
  }
}
