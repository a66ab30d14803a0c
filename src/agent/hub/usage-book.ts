/**
 * The agents' usage windows as tether keeps them (docs/api.md "Usage"): each session's, from the
 * reports of its agent, and each account's (one per agent kind: the limits are the account's, so
 * the newest report from any of that agent's sessions).
 *
 * What an agent reports is checked before it is kept: a percent that is not a number leaves its
 * window out, one below 0 or above 100 is clamped to 0 or 100, a reset that is not a time (not a
 * number, before 2020, more than 400 days ahead) is left out; a window a report no longer gives
 * keeps its last reading. Each kind of fault is logged once per agent kind. A window whose reset
 * passed is no longer shown: its figure was of the period before.
 *
 * Invariants: every kept window has a percent from 0 to 100 (one decimal) and a reset that is an
 * ISO time or none; nothing kept is NaN or null.
 */
import type { Logger } from '../../log.js';
import { bindingWindow, type AgentUsage, type UsageWindow } from '../../protocol/usage.js';
import type { UsageReport } from '../contract/usage.js';

/** What a window's name may be. */
const WINDOW_NAME_RE = /^[a-z0-9_]{1,32}$/;
/** The earliest reset taken as a time (2020-01-01). */
const EARLIEST_RESET_MS = Date.UTC(2020, 0, 1);
/** The furthest ahead a reset is taken as a time. */
const LATEST_RESET_AHEAD_MS = 400 * 24 * 60 * 60 * 1000;

/** The faults a report may have, as the log says them. */
export const USAGE_FAULTS = {
  name: 'a window name that is not a short word: the window is left out',
  percent: 'a used percent that is not a number: the window is left out',
  below: 'a used percent below 0: taken as 0',
  above: 'a used percent above 100: taken as 100',
  reset: 'a reset that is not a time: left out',
  vanished: 'a window an earlier report gave is missing: its last reading is kept',
} as const;
export type UsageFault = keyof typeof USAGE_FAULTS;

export interface UsageBookDeps {
  readonly now: () => number;
  readonly log: Logger;
}

/** A report's windows checked: the kept ones, and the faults found. */
export function checkedWindows(report: UsageReport, now: number): { windows: UsageWindow[]; faults: UsageFault[] } {
  const faults = new Set<UsageFault>();
  const windows: UsageWindow[] = [];
  for (const r of report.windows) {
    if (!WINDOW_NAME_RE.test(r.name)) faults.add('name');
    else if (!Number.isFinite(r.usedPercent)) faults.add('percent');
    else {
      if (r.usedPercent < 0) faults.add('below');
      if (r.usedPercent > 100) faults.add('above');
      const usedPercent = Math.round(Math.min(100, Math.max(0, r.usedPercent)) * 10) / 10;
      const timed =
        r.resetsAt !== null && Number.isFinite(r.resetsAt) && r.resetsAt >= EARLIEST_RESET_MS && r.resetsAt <= now + LATEST_RESET_AHEAD_MS;
      if (r.resetsAt !== null && !timed) faults.add('reset');
      windows.push({ name: r.name, usedPercent, ...(timed ? { resetsAt: new Date(r.resetsAt).toISOString() } : {}) });
    }
  }
  return { windows, faults: [...faults] };
}

/** Whether a window's reset passed (its figure was the period before). */
const passed = (w: UsageWindow, now: number) => w.resetsAt !== undefined && Date.parse(w.resetsAt) <= now;

export class UsageBook {
  private readonly sessions = new Map<string, AgentUsage>();
  /** Each agent kind's windows, each the newest reading any of its sessions gave of it, and when. */
  private readonly accounts = new Map<string, Map<string, { readonly window: UsageWindow; readonly at: number }>>();
  /** Faults logged already, by agent kind and fault. */
  private readonly logged = new Set<string>();
  private readonly listeners = new Set<(session: string, usage: AgentUsage) => void>();

  constructor(private readonly deps: UsageBookDeps) {}

  /**
   * Takes one report of the agent (of kind `agent`) of session `session`; returns the session's
   * usage when a window changed (a new figure, a new window), null when the report changed none.
   */
  apply(session: string, agent: string, report: UsageReport): AgentUsage | null {
    const now = this.deps.now();
    const { windows, faults } = checkedWindows(report, now);
    const before = this.sessions.get(session);
    const byName = new Map((before?.agent === agent ? before.windows : []).filter((w) => !passed(w, now)).map((w) => [w.name, w]));
    if ([...byName.keys()].some((name) => !windows.some((w) => w.name === name))) faults.push('vanished');
    for (const fault of faults) this.fault(agent, fault, session);
    for (const w of windows) byName.set(w.name, w);
    const kept = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
    const usage: AgentUsage = { agent, windows: kept, binding: bindingWindow(kept), observedAt: new Date(now).toISOString() };
    this.sessions.set(session, usage);
    // The account takes only what this report said: a window another session gave more lately stays.
    const account = this.accounts.get(agent) ?? new Map<string, { window: UsageWindow; at: number }>();
    for (const w of windows) account.set(w.name, { window: w, at: now });
    if (account.size > 0) this.accounts.set(agent, account);
    const same = before !== undefined && JSON.stringify(before.windows) === JSON.stringify(kept) && before.agent === agent;
    if (same) return null;
    for (const l of [...this.listeners]) l(session, usage);
    return usage;
  }

  /** Calls `listener` with each session's usage when a window changed; returns the undo. */
  onChange(listener: (session: string, usage: AgentUsage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Session `session`'s usage (windows whose reset passed left out), or null when its agent reported no window. */
  of(session: string): AgentUsage | null {
    const usage = this.fresh(this.sessions.get(session));
    return usage === null || usage.windows.length === 0 ? null : usage;
  }

  /** Each agent kind's windows, each the newest reading of any of its sessions (those whose reset passed left out), by kind. */
  account(): AgentUsage[] {
    const now = this.deps.now();
    const out: AgentUsage[] = [];
    for (const [agent, byName] of this.accounts) {
      const held = [...byName.values()].filter((r) => !passed(r.window, now));
      if (held.length === 0) continue;
      const windows = held.map((r) => r.window).sort((a, b) => a.name.localeCompare(b.name));
      const at = Math.max(...held.map((r) => r.at));
      out.push({ agent, windows, binding: bindingWindow(windows), observedAt: new Date(at).toISOString() });
    }
    return out.sort((a, b) => a.agent.localeCompare(b.agent));
  }

  /** Forgets a deleted session (its account's figures stay). */
  forget(session: string): void {
    this.sessions.delete(session);
  }

  private fresh(usage: AgentUsage | undefined): AgentUsage | null {
    if (usage === undefined) return null;
    const now = this.deps.now();
    if (!usage.windows.some((w) => passed(w, now))) return usage;
    const windows = usage.windows.filter((w) => !passed(w, now));
    return { ...usage, windows, binding: bindingWindow(windows) };
  }

  private fault(agent: string, fault: UsageFault, session: string): void {
    const key = `${agent}\u0000${fault}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.deps.log.warn({ session, agent, fault }, `the agent's usage report had ${USAGE_FAULTS[fault]}`);
  }
}
