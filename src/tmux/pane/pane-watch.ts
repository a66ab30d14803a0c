/**
 * Watching a linked agent pane for its program's death and for a new program in it. tmux 3.3a's
 * format subscriptions (`refresh-client -B`) do not report `pane_dead` changing (measured), and
 * control mode has no pane-died notice, so the watch asks: every PANE_CHECK_MS, and at once when
 * the link sees the window or layout notices that go with a death. The looks of every watched
 * pane of one tmux server are one command (`list-panes -a`) over one of their control clients,
 * not a command per pane: a hundred idle sessions made a hundred commands a second.
 *
 * Invariant: the first look is always reported, and each change after it once (pane.exited,
 * pane.revived); a new program in the pane is reported whatever it does. Looks never overlap, so
 * their answers are judged in the order tmux gave them.
 */
import type { ControlClient } from '../control/control-client.js';
import type { PaneLinkEvent } from './link-facts.js';
import { buildControlCommand } from '../quote.js';
import type { TmuxTarget } from '../target.js';

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
  /** The tmux server: its watches share their looks. */
  readonly target: TmuxTarget;
  /** The pane's session's control client (the looks take turns among them). */
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
  /** What the watch last reported; null until its first look, which is always reported. */
  private paneDead: boolean | null = null;
  private paneStatus: number | null = null;
  /** The pid of the pane's program last seen: a new one is a new program (a respawn). */
  private panePid: number | null = null;
  private deadSince: number | null = null;

  constructor(private readonly deps: PaneWatchDeps) {}

  get client(): ControlClient {
    return this.deps.client;
  }

  get paneId(): string {
    return this.deps.paneId;
  }

  /** Looks now, then every PANE_CHECK_MS until stopped. */
  start(): void {
    looksOf(this.deps.target).add(this);
  }

  stop(): void {
    this.stopped = true;
    looksOf(this.deps.target).remove(this);
  }

  /** Looks at the pane now (with every other watched pane of the server; a look under way is followed by one more). */
  check(): void {
    if (this.stopped || this.deps.client.isClosed) return;
    looksOf(this.deps.target).look();
  }

  /** What a look found of this pane. */
  seenInLook(state: PaneState): void {
    if (!this.stopped) this.judge(state);
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

/** One pane a line: its id, then PANE_STATE_FORMAT. */
const LOOK_COMMAND = buildControlCommand(['list-panes', '-a', '-F', `#{pane_id} ${PANE_STATE_FORMAT}`]);

/** The states of the panes a look listed, by pane id. */
export function parseLook(body: Buffer): Map<string, PaneState> {
  const out = new Map<string, PaneState>();
  for (const line of body.toString('latin1').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) out.set(line.slice(0, sp), parsePaneState(line.slice(sp + 1)));
  }
  return out;
}

/**
 * The looks at the watched panes of one tmux server: one `list-panes -a` a tick over one of their
 * control clients (they take turns). A look asked for while one is under way runs right after it.
 */
class PaneLooks {
  private readonly watches = new Set<PaneWatch>();
  private timer: NodeJS.Timeout | null = null;
  private looking = false;
  private again = false;
  private turn = 0;

  add(watch: PaneWatch): void {
    this.watches.add(watch);
    if (!this.timer) {
      this.timer = setInterval(() => this.look(), PANE_CHECK_MS);
      this.timer.unref();
    }
    this.look();
  }

  remove(watch: PaneWatch): void {
    this.watches.delete(watch);
    if (this.watches.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  look(): void {
    if (this.looking) {
      this.again = true;
      return;
    }
    const watches = [...this.watches].filter((w) => !w.client.isClosed);
    if (watches.length === 0) return;
    const via = watches[this.turn++ % watches.length]!;
    this.looking = true;
    via.client
      .run(LOOK_COMMAND)
      .then((body) => {
        const states = parseLook(body);
        for (const w of [...this.watches]) {
          const state = states.get(w.paneId);
          if (state) w.seenInLook(state);
        }
      })
      .catch(() => undefined) // that client closed (its link reports it): the next look takes another
      .finally(() => {
        this.looking = false;
        if (!this.again) return;
        this.again = false;
        this.look();
      });
  }
}

const looks = new Map<string, PaneLooks>();

/** The looks of the watches of server `target`. */
function looksOf(target: TmuxTarget): PaneLooks {
  const key = [target.bin, ...target.socketArgs].join('\0');
  let l = looks.get(key);
  if (!l) looks.set(key, (l = new PaneLooks()));
  return l;
}
