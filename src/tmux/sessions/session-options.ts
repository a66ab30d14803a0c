/**
 * tether's user options of the sessions on one tmux server, as tether last read or wrote them,
 * so that answering a request costs no tmux process (docs/architecture.md "Session facts").
 *
 * - The options tether sets once, when it creates or adopts a session (`@created`, `@project`,
 *   `@tether-cwd`, `@tether-agent`, `@tether-worktree`), are read once per session and kept for
 *   its life.
 * - The description (`@description`) is kept as tether wrote it, and read again from tmux by
 *   every periodic discovery scan (`listSessions` with `refresh`), so a value set by hand in tmux
 *   shows within one period (10 s while a session is linked).
 *
 * Entries are keyed by the session itself (server pid, session id, creation time), never by its
 * name alone: a session killed and made again under the same name is a new entry. A listing of
 * the server (`reconcile`) maps names to sessions and drops the entries of sessions gone.
 *
 * Invariant: a read that began before a write never overwrites what the write set.
 */
import type { TmuxCli } from '../exec.js';
import type { SessionWorktree } from '../../machines/session.machine.js';

/** The options tether sets once per session; null where unset. */
export interface FixedOptions {
  readonly createdAt: string | null;
  readonly project: string | null;
  readonly cwd: string | null;
  readonly agent: string | null;
  /** The git worktree it was made in; null for any other session. */
  readonly worktree: SessionWorktree | null;
}

interface Entry {
  fixed: FixedOptions | null;
  /** undefined until read or written. */
  description: string | null | undefined;
  /** Bumped by every write: a read begun before it leaves the value alone. */
  writes: number;
  /** Made by tether (`made`): its name, and the mark it was made at. */
  made?: { readonly name: string; readonly mark: number };
}

/** The identity of one session on one server: `<server pid> <session id> <session_created>`. */
export type SessionKey = string;

export const sessionKey = (serverPid: string | number, sessionId: string, created: number): SessionKey =>
  `${serverPid} ${sessionId} ${created}`;

/** The shape tether writes `@created` in (`Date.toISOString`); a value of any other shape reads as unset. */
export const CREATED_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

export class SessionOptionStore {
  private readonly entries = new Map<SessionKey, Entry>();
  /** The session each name was at the last listing. */
  private readonly keyOfName = new Map<string, SessionKey>();
  /** The sessions of the last listing (less those forgotten since). */
  private readonly listed = new Set<SessionKey>();
  /** Reads from tmux under way, by the sessions they fill. */
  private readonly reads = new Map<SessionKey, Promise<void>>();

  /**
   * A read of these sessions' options from tmux is under way until `read` settles: a listing or
   * a `session-meta` that lacks the same sessions waits for it rather than read them again (a
   * session made while others run is seen by discovery, the record keeper and its phone at once).
   */
  reading(keys: readonly SessionKey[], read: Promise<void>): void {
    for (const key of keys) this.reads.set(key, read);
    const done = () => {
      for (const key of keys) if (this.reads.get(key) === read) this.reads.delete(key);
    };
    read.then(done, done);
  }

  /** Sessions being made by tether now, by name. */
  private readonly makes = new Map<string, Promise<void>>();

  /**
   * tether is making session `name` until `make` settles (then `made` holds its options): a
   * listing that sees the session in the meantime waits for it rather than read them.
   */
  making(name: string, make: Promise<unknown>): void {
    const settled = make.then(
      () => undefined,
      () => undefined,
    );
    this.makes.set(name, settled);
    void settled.then(() => {
      if (this.makes.get(name) === settled) this.makes.delete(name);
    });
  }

  /** What will fill session `name` (`key`, when listed) without a read of its own: a read under way, or its making. */
  pendingRead(name: string, key: SessionKey | undefined): Promise<void> | undefined {
    return (key === undefined ? undefined : this.reads.get(key)) ?? this.makes.get(name);
  }

  /** Sessions made so far (`made`): a listing takes a mark before it asks tmux. */
  private makeCount = 0;

  /** A mark taken before a listing asks tmux: sessions made after it are not in its answer. */
  mark(): number {
    return this.makeCount;
  }

  /**
   * A listing of the server, asked after `mark`: `sessions` are the tether sessions it holds
   * now; every other entry goes, but for a session tether made after the mark (tmux was asked
   * before it existed).
   */
  reconcile(sessions: readonly { readonly name: string; readonly key: SessionKey }[], mark = this.makeCount): void {
    this.listed.clear();
    this.keyOfName.clear();
    for (const s of sessions) {
      this.listed.add(s.key);
      this.keyOfName.set(s.name, s.key);
    }
    for (const [key, e] of this.entries) {
      if (this.listed.has(key)) continue;
      if (e.made && e.made.mark > mark && !this.keyOfName.has(e.made.name)) {
        this.listed.add(key);
        this.keyOfName.set(e.made.name, key);
      } else this.entries.delete(key);
    }
  }

  private entry(key: SessionKey): Entry {
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { fixed: null, description: undefined, writes: 0 }));
    return e;
  }

  fixed(key: SessionKey): FixedOptions | null {
    return this.entries.get(key)?.fixed ?? null;
  }

  description(key: SessionKey): string | null | undefined {
    return this.entries.get(key)?.description;
  }

  /** Everything held of session `name` (as the last listing named it), or null when something is not held. */
  known(name: string): { readonly fixed: FixedOptions; readonly description: string | null } | null {
    const key = this.keyOfName.get(name);
    const e = key === undefined ? undefined : this.entries.get(key);
    if (!e?.fixed || e.description === undefined) return null;
    return { fixed: e.fixed, description: e.description };
  }

  /** The session `name` was at the last listing, if it was listed. */
  keyOf(name: string): SessionKey | undefined {
    return this.keyOfName.get(name);
  }

  /** A mark of the writes to a session so far, taken before reading it from tmux. */
  writesTo(key: SessionKey): number {
    return this.entries.get(key)?.writes ?? 0;
  }

  /** What a read from tmux found; the description only if nothing was written since `writesBefore`. */
  filled(key: SessionKey, read: { fixed?: FixedOptions; description?: string | null }, writesBefore: number): void {
    // Not in the last listing (gone since): nothing to keep.
    if (!this.listed.has(key)) return;
    const e = this.entry(key);
    if (read.fixed && !e.fixed) e.fixed = read.fixed;
    if (read.description !== undefined && e.writes === writesBefore) {
      const before = e.description;
      e.description = read.description;
      // Set by hand in tmux since tether last knew it: its clients are told (a session-meta).
      if (before !== undefined && before !== read.description) for (const [name, k] of this.keyOfName) if (k === key) this.tell(name);
    }
  }

  private readonly descriptionListeners = new Set<(name: string) => void>();

  /** Calls `listener` with a session's name when a read from tmux finds its description changed. */
  onDescriptionRead(listener: (name: string) => void): () => void {
    this.descriptionListeners.add(listener);
    return () => this.descriptionListeners.delete(listener);
  }

  private tell(name: string): void {
    for (const listener of this.descriptionListeners) listener(name);
  }

  /**
   * tether has just made session `name` (`key`) with these options, in the one invocation that
   * made it: held at once, so no listing, record or phone reads them back from tmux.
   */
  made(name: string, key: SessionKey, options: { readonly fixed: FixedOptions; readonly description: string | null }): void {
    this.listed.add(key);
    this.keyOfName.set(name, key);
    const e = this.entry(key);
    e.fixed = options.fixed;
    e.description = options.description;
    e.made = { name, mark: ++this.makeCount };
  }

  /** tether wrote (or removed, `null`) the description of session `name`. */
  describedAs(name: string, description: string | null): void {
    const key = this.keyOfName.get(name);
    if (key === undefined) return; // not listed yet: the next read finds it in tmux
    const e = this.entry(key);
    e.description = description;
    e.writes++;
  }

  /** tether killed session `name`: whatever it held goes now, before the next listing says so. */
  forget(name: string): void {
    const key = this.keyOfName.get(name);
    if (key === undefined) return;
    this.entries.delete(key);
    this.keyOfName.delete(name);
    this.listed.delete(key);
  }
}

const stores = new WeakMap<TmuxCli, SessionOptionStore>();

/** The store of the server `cli` runs against. */
export function optionStoreOf(cli: TmuxCli): SessionOptionStore {
  let store = stores.get(cli);
  if (!store) stores.set(cli, (store = new SessionOptionStore()));
  return store;
}
