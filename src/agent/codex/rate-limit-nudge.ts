/**
 * Codex's "Approaching rate limits · Switch to <model>?" dialog as an ask (docs/agents.md
 * "Codex"), predicted from what Codex reports, since nothing but its screen says the dialog is up.
 * Codex 0.169 readies it (its `rate_limits.rs`, measured) when a `token_count` of its own limit has
 * a window at 90 % or more as a whole number (89.5 and up: rollout-usage.ts), the workspace has no
 * credits, the model is not already the one it offers, the dialog is not turned off (config.toml
 * when Codex started, or its command line: nudge-config.ts), and it has not shown it in this
 * conversation of this Codex process; it shows it when the turn ends (finished, interrupted, or on
 * a stop), drawn with the state Codex writes to its terminal then (OSC 7501 `done`, `idle` for an
 * interrupted turn). It then takes every key: the next state Codex writes comes with the first key
 * it takes, whatever the key did (none comes after an interrupted turn, whose state is `idle`
 * already).
 *
 * So at a turn's end in the rollout file (its records reported first) an ask opens when Codex
 * showed the dialog and no key reached Codex since the turn's end. The ask ends when Codex writes
 * a new state after that (a key was taken: tether's, or the terminal's), or when a turn starts (the
 * agent-state machine ends it). Whether Codex's command line turned the dialog off only its notify
 * says (at each turn's end, launch.ts): until a Codex process's first notify came, an ask waits for
 * the notify of its turn, at most NOTIFY_WAIT_MS (a notify that comes after it opened and says so
 * ends it).
 * A turn that ended on a stop shows the dialog too, but opens no ask: the stop stays what the
 * session says (a usage limit's continue is scheduled against it). A prediction that is wrong (the
 * dialog not up) ends the same ways; it holds queued prompts until then, which is the safe side:
 * a prompt typed into the dialog is lost and its Enter switches the model.
 *
 * Invariants: at most one such ask per session, reported only after its turn's end was; every
 * input is the agent's own report (its rollout file, its notify, its terminal state), never the
 * screen; nothing here throws.
 */
import type { AdapterRuntime, TerminalNotice } from '../contract/adapter.js';
import type { UsageReading } from '../contract/usage.js';
import { CODEX_STATE_OSC, codexRateLimitNudge, nudgeModelOf, readCodexState } from './asks.js';
import { NUDGE_HIDDEN_FIELD } from './notify-fields.js';
import { readNudgeHidden } from './nudge-config.js';
import type { RolloutFacts } from './rollout-records.js';
import { atNudgeThreshold, type RolloutRates } from './rollout-usage.js';

/** How long an ask waits for its turn's notify, while no notify of the Codex process said its command line's setting. */
export const NOTIFY_WAIT_MS = 1500;

export interface RateLimitNudgeDeps extends Pick<AdapterRuntime, 'report' | 'env'> {
  /** Reads the setting in Codex's config.toml (nudge-config.ts by default). */
  readonly configHidden?: (env: NodeJS.ProcessEnv) => Promise<boolean>;
  readonly notifyWaitMs?: number;
}

/** Where Codex's terminal state is: a turn runs, its end was written (the dialog drawn with it), or a key came since. */
type Phase = 'turn' | 'ended' | 'keyed';

interface Nudge {
  /** The setting in config.toml when this Codex (or its conversation) started. */
  configHidden: boolean;
  /** The setting on Codex's command line (null: not set), once a notify of the process said it (`argsKnown`). */
  argsHidden: boolean | null;
  argsKnown: boolean;
  /** An ask waiting for the notify (`argsKnown`), and its bound. */
  due: UsageReading | null;
  waiting: NodeJS.Timeout | null;
  /** Codex showed the dialog in this conversation of this process (it shows it once). */
  shown: boolean;
  /** The highest window that readied it since the last turn's end, or null. */
  pending: UsageReading | null;
  /** The workspace has credits (the last `credits` a record said: Codex keeps it). */
  credits: boolean;
  model: string | null;
  cliVersion: string | null;
  /** The last state Codex wrote, and where that puts it (null: none seen). */
  state: string | null;
  phase: Phase | null;
  /** tether reported the ask, and it has not ended. */
  open: boolean;
  /** Counts the reads of config.toml: only the latest one's answer is kept. */
  reads: number;
}

export class CodexRateLimitNudge {
  private readonly sessions = new Map<string, Nudge>();

  constructor(private readonly deps: RateLimitNudgeDeps) {}

  /**
   * The daemon linked to the session's pane: a new Codex process (respawned, restored, or the
   * daemon's start; a pane relinked after a lost link is taken as one too, which errs on the side
   * of an ask): its dialog may show again, and its settings are read again.
   */
  seen(session: string): void {
    const n = this.of(session);
    n.argsHidden = null;
    n.argsKnown = false;
    this.followed(session);
  }

  /** The session's rollout file is another thread's: a new conversation in Codex, whose dialog is shown once again. */
  followed(session: string): void {
    const n = this.of(session);
    n.shown = false;
    n.pending = null;
    n.credits = false;
    this.cancel(n);
    this.readConfig(n);
  }

  /** The facts of one look at the session's rollout file, in order (their outcomes were reported). */
  records(session: string, facts: readonly RolloutFacts[]): void {
    const n = this.of(session);
    let due: UsageReading | null = null;
    for (const f of facts) {
      if (f.cliVersion !== undefined) n.cliVersion = f.cliVersion;
      if (f.model !== undefined) n.model = f.model;
      if (f.rates !== undefined) this.rates(n, f.rates);
      if (f.turn === 'started') {
        // The turn's start ended the ask (the state machine leaves it); a dialog of an older turn is gone.
        n.open = false;
        due = null;
        this.cancel(n);
      } else if (f.turn !== undefined) {
        const shown = this.shows(n);
        due = f.turn === 'ended' ? shown : null;
      }
    }
    if (due === null) return;
    if (n.argsKnown) return this.open(session, n, due);
    n.due = due;
    n.waiting ??= setTimeout(() => this.decide(session, n), this.deps.notifyWaitMs ?? NOTIFY_WAIT_MS);
    n.waiting.unref();
  }

  /** A notice the session's Codex wrote: its state (OSC 7501). */
  notice(session: string, notice: TerminalNotice): void {
    if (notice.code !== CODEX_STATE_OSC) return;
    const state = readCodexState(notice.text);
    const value = state.state;
    if (value === undefined || (state.app !== undefined && state.app !== 'codex')) return;
    const n = this.of(session);
    if (value === n.state) return;
    const before = n.phase;
    n.state = value;
    n.phase = value === 'working' || value === 'blocked' ? 'turn' : before === 'turn' ? 'ended' : 'keyed';
    // A state after the one the dialog was drawn with: a key reached Codex (the dialog took it).
    if (n.open && before !== 'turn') this.ended(session, n, 'terminal');
  }

  /** A notify of the session's Codex (at a turn's end): what its command line says of the dialog. */
  notified(session: string, fields: Readonly<Record<string, string>>): void {
    const setting = fields[NUDGE_HIDDEN_FIELD];
    const n = this.of(session);
    n.argsKnown = true;
    n.argsHidden = setting === 'true' ? true : setting === 'false' ? false : null;
    // An ask that did not wait for it (its bound passed): a dialog turned off was never up.
    if (n.argsHidden === true && n.open) this.ended(session, n, 'moved-on');
    if (n.due !== null) this.decide(session, n);
  }

  forget(session: string): void {
    const n = this.sessions.get(session);
    if (n) this.cancel(n);
    this.sessions.delete(session);
  }

  /** The ask waiting for the notify opens now, unless the dialog is turned off. */
  private decide(session: string, n: Nudge): void {
    const due = n.due;
    this.cancel(n);
    if (due !== null && !this.hidden(n) && this.sessions.get(session) === n) this.open(session, n, due);
  }

  /** Opens the ask of the dialog shown because of window `due`, unless a key reached Codex since the turn's end. */
  private open(session: string, n: Nudge, due: UsageReading): void {
    if (n.open || n.phase === 'keyed') return;
    n.open = true;
    this.deps.report(session, { events: [], ask: codexRateLimitNudge(nudgeModelOf(n.cliVersion), due) });
  }

  private cancel(n: Nudge): void {
    if (n.waiting !== null) clearTimeout(n.waiting);
    n.waiting = null;
    n.due = null;
  }

  private ended(session: string, n: Nudge, why: 'terminal' | 'moved-on'): void {
    n.open = false;
    this.deps.report(session, { events: [], askEnded: { why } });
  }

  /** A record's rate limits: the dialog readied, as Codex decides it at each of them. */
  private rates(n: Nudge, r: RolloutRates): void {
    if (r.credits !== null) n.credits = r.credits;
    if (!r.high || n.credits || n.shown || this.surelyHidden(n)) return;
    const offered = nudgeModelOf(n.cliVersion);
    if (offered !== null && n.model === offered) return;
    for (const w of r.usage?.windows ?? []) {
      if (atNudgeThreshold(w.usedPercent) && (n.pending === null || w.usedPercent > n.pending.usedPercent)) n.pending = w;
    }
  }

  /** A turn ended: Codex shows the dialog readied during it, unless it is turned off; returns its window, or null. */
  private shows(n: Nudge): UsageReading | null {
    const pending = n.pending;
    n.pending = null;
    if (pending === null || this.surelyHidden(n)) return null;
    n.shown = true;
    return pending;
  }

  /** Whether the dialog is turned off, as far as is known (config.toml alone before the notify said the command line's setting). */
  private hidden(n: Nudge): boolean {
    return n.argsHidden ?? n.configHidden;
  }

  /** The same once the notify said the command line's setting (which may turn it on against config.toml); false before. */
  private surelyHidden(n: Nudge): boolean {
    return n.argsKnown && this.hidden(n);
  }

  private readConfig(n: Nudge): void {
    const read = ++n.reads;
    void (this.deps.configHidden ?? readNudgeHidden)(this.deps.env)
      .then((hidden) => {
        if (n.reads === read) n.configHidden = hidden;
      })
      .catch(() => undefined);
  }

  private of(session: string): Nudge {
    let n = this.sessions.get(session);
    if (!n) {
      n = this.fresh();
      this.sessions.set(session, n);
    }
    return n;
  }

  private fresh(): Nudge {
    return {
      configHidden: false,
      argsHidden: null,
      argsKnown: false,
      due: null,
      waiting: null,
      shown: false,
      pending: null,
      credits: false,
      model: null,
      cliVersion: null,
      state: null,
      phase: null,
      open: false,
      reads: 0,
    };
  }
}
