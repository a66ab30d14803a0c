/**
 * Watching a linked agent pane for its program's death and for a new program in it. tmux 3.3a's
 * format subscriptions (`refresh-client -B`) do not report `pane_dead` changing (measured), and
 * control mode has no pane-died notice, so the watch asks: one tiny command per session per
 * PANE_CHECK_MS, and at once when the link sees the window or layout notices that go with a death.
 *
 * Invariant: the first look is always reported, and each change after it once (pane.exited,
 * pane.revived); a new program in the pane is reported whatever it does.
 */
import type { ControlClient } from './control-client.js';
import type { PaneLinkEvent } from './link-facts.js';
import { buildControlCommand } from './quote.js';

/** How often the watch asks tmux whether the agent pane died. */
export const PANE_CHECK_MS = 1000;

/** The tmux format the link reads about its agent pane, one line (tmux 3.3a has every field). */
export const PANE_STATE_FORMAT = '#{pane_dead}:#{pane_dead_status}:#{pane_pid}:#{pane_dead_signal}:#{pane_dead_time}';

/** The agent pane as tmux reports it; a dead pane keeps its program's pid until it is respawned. */
export interface PaneState {
  readonly dead: boolean;
  /** Exit status, once tmux knows it and when the program exited by itself. */
  readonly status: number | null;
  readonly pid: number | null;
  /** The signal that killed the program (tmux 3.3a's `pane_dead_signal`). */
  readonly signal: number | null;
  /** When the program died, epoch seconds. */
  readonly deadTime: number | null;
}

/** Parses a line of PANE_STATE_FORMAT; an empty field is null. */
export function parsePaneState(text: string): PaneState {
  const [dead, status, pid, signal, deadTime] = text.trim().split(':');
  const number = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);
  return { dead: dead === '1', status: number(status), pid: number(pid), signal: number(signal), deadTime: number(deadTime) };
}

/** Whether tmux knows how the pane's program ended (it sets the status a moment after the death). */
export function outcomeKnown(state: PaneState): boolean {
  return state.status !== null || state.signal !== null;
}

export interface PaneWatchDeps {
  readonly client: ControlClient;
  readonly paneId: string;
  /** The tmux server's pid, when known (see `nudgeReaper`). */
  readonly serverPid: () => number | null;
  /** Every look at the pane once tmux knows enough (the exit witness hears them). */
  readonly seen: (state: PaneState) => void;
  /** The pane's program died: tmux changed the screen itself (clients resync). */
  readonly died: () => void;
  readonly report: (event: PaneLinkEvent) => void;
}

export class PaneWatch {
  private stopped = false;
  private checking = false;
  private timer: NodeJS.Timeout | null = null;
  /** What the watch last reported; null until its first look, which is always reported. */
  private paneDead: boolean | null = null;
  private paneStatus: number | null = null;
  /** The pid of the pane's program last seen: a new one is a new program (a respawn). */
  private panePid: number | null = null;
  private deadSince: number | null = null;

  constructor(private readonly deps: PaneWatchDeps) {}

  /** Looks now, then every PANE_CHECK_MS until stopped. */
  start(): void {
    this.check();
    this.timer = setInterval(() => this.check(), PANE_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Looks at the pane now (a look under way is not doubled). */
  check(): void {
    const { client, paneId } = this.deps;
    if (this.stopped || this.checking || client.isClosed) return;
    this.checking = true;
    client
      .run(buildControlCommand(['display-message', '-p', '-t', paneId, PANE_STATE_FORMAT]))
      .then((body) => this.judge(parsePaneState(body.toString('utf8'))))
      .catch(() => undefined) // a closed client is reported by the link's close
      .finally(() => {
        this.checking = false;
      });
  }

  private judge(state: PaneState): void {
    // tmux sets the exit status (or signal) a moment after it marks the pane dead: wait for it a little.
    if (state.dead && !outcomeKnown(state)) {
      if (this.deadSince === null) {
        this.deadSince = Date.now();
        this.nudgeReaper();
      }
      if (Date.now() - this.deadSince < 2 * PANE_CHECK_MS) return;
    }
    if (!state.dead) this.deadSince = null;
    if (this.stopped) return;
    this.deps.seen(state);
    // A new program in the pane (respawned) is reported whatever it does: running, or dead
    // already. A death seen before tmux had its status is reported again once it is known.
    const newProgram = state.pid !== null && this.panePid !== null && state.pid !== this.panePid;
    const statusLearned = state.dead && this.paneDead === true && state.status !== null && this.paneStatus === null;
    if (state.pid !== null) this.panePid = state.pid;
    if (state.dead === this.paneDead && !statusLearned && !newProgram) return;
    // tmux 3.3a drops the output it had not yet written to control clients when a pane dies
    // (often the agent's last words), and writes "Pane is dead" on the screen itself: the
    // stream takes a gap, and clients resync from a snapshot of the dead pane's screen.
    if (state.dead && (this.paneDead !== true || newProgram)) this.deps.died();
    this.paneDead = state.dead;
    this.paneStatus = state.status;
    this.deps.report(state.dead ? { type: 'pane.exited', status: state.status } : { type: 'pane.revived' });
  }

  /**
   * Under load tmux 3.3a now and then misses the SIGCHLD of a pane's process: the pane is dead,
   * the process a zombie, and its exit status never known (measured: 1 in 3 under four busy
   * cores). tmux's SIGCHLD handler only reaps its children, so one more SIGCHLD makes it
   * collect the status; a spare one is harmless. Then look again soon.
   */
  private nudgeReaper(): void {
    const pid = this.deps.serverPid();
    if (pid === null) return;
    try {
      process.kill(pid, 'SIGCHLD');
    } catch {
      return; // the server is gone: the link's close says so
    }
    setTimeout(() => this.check(), 200).unref();
  }
}
