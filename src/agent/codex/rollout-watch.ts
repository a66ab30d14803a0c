/**
 * Codex's turns as they happen, read from its rollout files (docs/agents.md "Codex"): Codex 0.169
 * gives tether no signal when a prompt is submitted or a tool runs (its notify fires at the end
 * of a turn; its hooks run only after a review screen), but it writes each turn to
 * `<sessions>/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl` as the turn goes. The daemon
 * follows each Codex session's file and hands each record's meaning (rollout-records.ts) to the
 * hub: its state events, a prompt, a stop, the account's usage windows; and what the records tell
 * of the turn and of Codex (its facts) to `observe`, once per look, in order.
 *
 * Which file is a session's:
 * - its thread id, once known (the notify program names it at each turn's end; a restored
 *   session resumes a recorded one): the file named after it, read from its end then on;
 * - before that (a new session's first turn; Codex makes the thread and its file at the first
 *   prompt): a new file whose `session_meta` names the session's directory, made after the
 *   daemon began watching the session. It is taken only when exactly one watched session that
 *   has no file yet works in that directory; when several do, none takes it, and each waits for
 *   its notify;
 * - a notify naming a thread made since the session was watched (one a look had not found yet,
 *   or could not tell apart): that file from its start, so the turn's records are all read, the
 *   end of the turn among them.
 *
 * Invariants: one timer for all sessions, never two ticks at once; every read is async and
 * bounded (rollout-tail.ts; a candidate file's head only); a file is inspected for discovery once.
 */
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import type { HookOutcome } from '../contract/adapter.js';
import type { EventMessage } from '../wire/extension-channel.js';
import { findRolloutFile, rolloutDays, rolloutThread, threadTime } from './rollout.js';
import { firstField, readRolloutLine, readSessionMeta, type RolloutCall, type RolloutFacts } from './rollout-records.js';
import { withLimit, type RolloutLimit } from './rollout-stops.js';
import { RolloutTail } from './rollout-tail.js';

/** How often the files are looked at. */
export const ROLLOUT_POLL_MS = 250;
/** How long before the daemon began watching a session its thread may have been made. */
export const ROLLOUT_DISCOVERY_SLACK_MS = 5_000;
/** Bytes of a candidate file read to find its `session_meta` thread and directory. */
const META_HEAD_BYTES = 8 * 1024;
/** Most file names remembered as inspected (forgotten all at once past it; they are only inspected again). */
const MAX_INSPECTED = 10_000;

export interface RolloutWatchDeps {
  /** `<CODEX_HOME or ~/.codex>/sessions`. */
  readonly sessionsDir: string;
  readonly now: () => number;
  readonly log: Logger;
  /** What the session's Codex did (state events, a prompt, a stop, its usage windows). */
  readonly report: (session: string, outcome: HookOutcome) => void;
  /** The facts of the records one look read, in order, after their outcomes were reported. */
  readonly observe?: (session: string, facts: readonly RolloutFacts[]) => void;
  /** The session's file is now another thread's (its first file found, a new conversation in Codex, a restored one). */
  readonly followed?: (session: string) => void;
  readonly pollMs?: number;
}

interface Follower {
  /** The directory Codex runs in (discovery matches it), or null. */
  cwd: string | null;
  /** When the daemon began watching (discovery takes threads made after it). */
  readonly since: number;
  thread: string | null;
  /** Read the thread's file from its start (found new) rather than its end. */
  fromStart: boolean;
  tail: RolloutTail | null;
  /** Tool calls started and not ended (a call id cut off a too-long line is ''). */
  running: string[];
  /** The last tool call the file started, with its command. */
  lastCall: RolloutCall | null;
  /** The used-up usage window the file last reported (a usage limit's reset). */
  lastLimit: RolloutLimit | null;
}

export class CodexRolloutWatch {
  private readonly followers = new Map<string, Follower>();
  private readonly inspected = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private again = false;
  /** Callers of `lookNow` waiting for the next look to end. */
  private waiters: (() => void)[] = [];

  constructor(private readonly deps: RolloutWatchDeps) {}

  /** Follows the session's Codex (working in `cwd`; resuming `thread` when known). Again: fills in what was unknown. */
  watch(session: string, cwd: string | null, thread: string | null): void {
    const known = this.followers.get(session);
    if (known) {
      known.cwd ??= cwd;
      if (known.thread === null && thread !== null) this.follow(session, known, thread, false);
      return;
    }
    this.followers.set(session, {
      cwd,
      since: this.deps.now(),
      thread,
      fromStart: false,
      tail: null,
      running: [],
      lastCall: null,
      lastLimit: null,
    });
    this.schedule();
  }

  /**
   * The notify program named the session's thread at the end of a turn. True when the thread's
   * file tells this turn (followed already, or a thread made since the session was watched: its
   * file, new, is read from its start), and is read now: its records say the turn ended. False
   * for an older thread not followed yet (followed from its end on): the notify's own word counts.
   */
  notified(session: string, thread: string): boolean {
    const f = this.followers.get(session);
    if (!f) return false;
    if (f.thread !== thread) {
      // The notify may come before a look found the new file (a loaded machine, a short turn).
      const made = threadTime(thread);
      const fresh = made !== null && made >= f.since - ROLLOUT_DISCOVERY_SLACK_MS;
      this.follow(session, f, thread, fresh);
      this.deps.log.info({ session, thread, fromStart: fresh }, "a Codex session's thread was named by its notify");
    }
    if (f.tail === null && !f.fromStart) return false;
    this.tickNow();
    return true;
  }

  /** The last tool call the session's file started (its command, when a shell call), or null. */
  lastCall(session: string): RolloutCall | null {
    return this.followers.get(session)?.lastCall ?? null;
  }

  /** Reads the files now; resolves once this look (or the one under way and a next one) is done. */
  lookNow(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.tickNow();
    });
  }

  forget(session: string): void {
    this.followers.delete(session);
  }

  stop(): void {
    for (const w of this.waiters.splice(0)) w();
    this.followers.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private follow(session: string, f: Follower, thread: string, fromStart: boolean): void {
    f.thread = thread;
    f.fromStart = fromStart;
    f.tail = null;
    f.running = [];
    f.lastCall = null;
    this.deps.followed?.(session);
  }

  private schedule(): void {
    if (this.timer === null && this.followers.size > 0) {
      this.timer = setTimeout(() => this.tickNow(), this.deps.pollMs ?? ROLLOUT_POLL_MS);
      this.timer.unref();
    }
  }

  private tickNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    const waiting = this.waiters.splice(0);
    void this.tick()
      .catch((err: Error) => this.deps.log.warn({ err: err.message }, "Codex's rollout files could not be read"))
      .finally(() => {
        for (const w of waiting) w();
        this.ticking = false;
        if (this.again) {
          this.again = false;
          this.tickNow();
        } else this.schedule();
      });
  }

  private async tick(): Promise<void> {
    if ([...this.followers.values()].some((f) => f.thread === null && f.cwd !== null)) await this.discover();
    for (const [session, f] of [...this.followers]) {
      if (f.thread !== null && f.tail === null) await this.open(session, f);
      if (f.tail !== null) await this.read(session, f);
    }
  }

  private async open(session: string, f: Follower): Promise<void> {
    const thread = f.thread!;
    const path = await findRolloutFile(this.deps.sessionsDir, thread);
    if (path === null || f.thread !== thread || f.tail !== null) return;
    const size = f.fromStart ? 0 : await sizeOf(path);
    if (size === null || f.thread !== thread || f.tail !== null) return;
    const tail = new RolloutTail(path, size);
    f.tail = tail;
    // Read from its end, its first line (the version of Codex that made it) is not read: its head says.
    const cliVersion = size > 0 ? firstField(await head(path), 'cli_version') : undefined;
    if (cliVersion !== undefined && this.followers.get(session)?.tail === tail) this.deps.observe?.(session, [{ cliVersion }]);
  }

  private async read(session: string, f: Follower): Promise<void> {
    const tail = f.tail!;
    const lines = await tail.read().catch(() => null);
    if (lines === null || f.tail !== tail || this.followers.get(session) !== f) return;
    const seen: RolloutFacts[] = [];
    for (const line of lines) {
      const { call, limit, stop, facts, ...meaning } = readRolloutLine(line);
      if (call !== undefined) f.lastCall = call;
      if (limit !== undefined) f.lastLimit = limit;
      if (facts !== undefined) seen.push(facts);
      const events = meaning.events.map((e) => this.pairCall(f, e));
      if (stop !== undefined) f.running = [];
      const stopped = stop !== undefined ? { stop: withLimit(stop, f.lastLimit) } : {};
      if (events.length > 0 || meaning.userMessage !== undefined || stop !== undefined || meaning.usage !== undefined)
        this.deps.report(session, { ...meaning, events, ...stopped });
    }
    if (seen.length > 0) this.deps.observe?.(session, seen);
  }

  /** Keeps the running calls; an output whose call's id was cut off (a too-long line) ends that call. */
  private pairCall(f: Follower, e: EventMessage): EventMessage {
    if (e.event === 'agent.start' || e.event === 'agent.end') f.running = [];
    if (e.event === 'tool.start') f.running.push(e.id ?? '');
    if (e.event !== 'tool.end') return e;
    const id = e.id ?? '';
    const ended = f.running.includes(id) ? id : f.running.includes('') ? '' : id;
    f.running = f.running.filter((r) => r !== ended);
    return { ...e, id: ended };
  }

  /** Looks for new rollout files of sessions whose thread is not known yet. */
  private async discover(): Promise<void> {
    const waiting = [...this.followers.values()].filter((f) => f.thread === null && f.cwd !== null);
    const since = Math.min(...waiting.map((f) => f.since)) - ROLLOUT_DISCOVERY_SLACK_MS;
    const days = new Set([...rolloutDays(this.deps.now()), ...rolloutDays(since)]);
    if (this.inspected.size > MAX_INSPECTED) this.inspected.clear();
    for (const day of days) {
      const names = await readdir(join(this.deps.sessionsDir, day)).catch(() => [] as string[]);
      for (const name of names) {
        const path = join(this.deps.sessionsDir, day, name);
        const thread = rolloutThread(name);
        if (thread === null || this.inspected.has(path)) continue;
        const made = threadTime(thread);
        if (made === null || made < since) {
          this.inspected.add(path);
          continue;
        }
        const text = await head(path);
        const meta = readSessionMeta(text);
        // A first line not written far enough yet is looked at again on the next tick.
        if (meta === null && !text.includes('\n') && text.length < META_HEAD_BYTES) continue;
        this.inspected.add(path);
        if (meta !== null && meta.thread === thread) this.claim(thread, meta.cwd, made);
      }
    }
  }

  /** A new thread in `cwd`: the session's when exactly one waiting session could own it. */
  private claim(thread: string, cwd: string, made: number): void {
    const all = [...this.followers.entries()];
    if (all.some(([, f]) => f.thread === thread)) return;
    const owners = all.filter(([, f]) => f.thread === null && f.cwd === cwd && f.since - ROLLOUT_DISCOVERY_SLACK_MS <= made);
    if (owners.length === 1) {
      this.follow(owners[0]![0], owners[0]![1], thread, true);
      this.deps.log.info({ session: owners[0]![0], thread }, "a Codex session's rollout file was found");
    } else if (owners.length > 1) {
      this.deps.log.info(
        { sessions: owners.map(([s]) => s), thread },
        'a new Codex rollout file could be any of several sessions: left to their notify',
      );
    }
  }
}

async function sizeOf(path: string): Promise<number | null> {
  const fh = await open(path, 'r').catch(() => null);
  if (!fh) return null;
  try {
    return (await fh.stat()).size;
  } finally {
    await fh.close();
  }
}

/** The first bytes of a file as text ('' when it cannot be read). */
async function head(path: string): Promise<string> {
  const fh = await open(path, 'r').catch(() => null);
  if (!fh) return '';
  try {
    const buf = Buffer.alloc(META_HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}
