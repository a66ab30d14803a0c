/**
 * The sessions operations the REST routes and the stream use, on top of the actor system and
 * tmux. Session facts are read from tmux (tether keeps no session store of its own: tmux is the
 * store, with tether's options of each session kept as read or written, src/tmux/sessions/session-options.ts;
 * see docs/architecture.md "Session facts without a process per request"), live facts (clients,
 * last output, agent state) from the actors.
 * Refusals are `DomainError`s; each transport names them its own way.
 *
 * Invariant: every value a client sent reaches tmux only through the quoting layer (argv with
 * `escapeArgvArg`, control lines with `buildControlCommand`) or as hex bytes; unknown sessions
 * are `session-not-found` before any tmux command names them.
 */
import type { SlashCommand } from '../../agent/contract/commands.js';
import { DomainError, isDomainError } from '../../errors.js';
import { absentSessionItem, sessionItemOf, type SessionItem } from './session-item.js';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';
import type { InputMessage } from '../../protocol/input.js';
import type { TmuxCli } from '../../tmux/exec.js';
import { inputCommands } from '../../tmux/pane/input.js';
import { SESSION_NAME_RE, compareSessionNames, isValidSessionName } from '../../protocol/session-name.js';
import { SESSION_OPTIONS } from '../../tmux/layout.js';
import { readSessionOptions, readUserOption, sessionExists, setUserOption, unsetUserOption } from '../../tmux/sessions/sessions.js';
import { listSessions, type TmuxSessionInfo } from '../../tmux/sessions/session-list.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import type { Workspaces } from '../workspaces/workspaces.service.js';
import { checkDirectory } from './directory.js';
import type { SessionStatus, SidecarSystem } from '../../actors/system.js';

/** How long input to a session not linked to tmux (just created, its link re-made) is held, in order, before `tmux-unavailable`. */
export const INPUT_LINK_WAIT_MS = 10_000;

export type { SessionItem } from './session-item.js';
export type { AgentCatalog, SessionAgents, SessionRecordsView, SessionsDeps } from './sessions.deps.js';
import {
  DEFAULT_ONLY,
  NO_AGENTS,
  NO_RECORDS,
  type AgentCatalog,
  type SessionAgents,
  type SessionRecordsView,
  type SessionsDeps,
} from './sessions.deps.js';

/** Longest agent name quoted back in a refusal. */
const MAX_QUOTED_AGENT = 40;

/** How many `pi-<n>` names a create without a name tries before giving up. */
const MAX_NAME_ATTEMPTS = 16;

/** What a new session is made of (`POST /sessions`). */
export interface CreateInput {
  name?: string;
  project?: string;
  cwd?: string;
  agent?: string;
  /** A worktree of its own: a new branch from `from` (default HEAD), or an existing branch checked out nowhere else. */
  worktree?: { branch: string; from?: string };
}

const notFound = (id: string) => new DomainError('session-not-found', `no session named "${id}"`);

export class SessionsService {
  private readonly system: SidecarSystem;
  private readonly cli: TmuxCli;
  private readonly namePrefix: string;
  private readonly agents: SessionAgents;
  private readonly clients: (id: string) => number;
  private readonly deletedListeners = new Set<(id: string, keepBuffer: boolean) => void>();
  private readonly records: SessionRecordsView;
  private readonly catalog: AgentCatalog;
  private readonly workspaces: Workspaces | null;

  constructor(deps: SessionsDeps) {
    this.system = deps.system;
    this.cli = deps.cli;
    this.namePrefix = deps.namePrefix;
    this.agents = deps.agents ?? NO_AGENTS;
    this.clients = deps.clients ?? (() => 0);
    this.records = deps.records ?? NO_RECORDS;
    this.catalog = deps.catalog ?? DEFAULT_ONLY;
    this.workspaces = deps.workspaces ?? null;
  }

  /**
   * The tether sessions tmux holds, with live facts; then those being restored after their tmux
   * server was lost, and those that could not be, with the reason.
   */
  async list(): Promise<SessionItem[]> {
    const infos = (await this.listTmux()).filter((s) => s.isTether);
    const status = this.system.status().sessions;
    const byId = new Map(status.map((s) => [s.id, s]));
    const items = infos.map((info) => this.item(info, byId.get(info.name)));
    const listed = new Set(items.map((i) => i.id));
    for (const live of status) {
      if (live.state !== 'restoring' || listed.has(live.id)) continue;
      const record = this.records.record(live.id);
      listed.add(live.id);
      items.push({ ...absentSessionItem(live.id, 'restoring', record), clients: this.clients(live.id) });
    }
    for (const u of this.records.unrestorable()) {
      if (listed.has(u.id)) continue;
      items.push({ ...absentSessionItem(u.id, 'unrestorable', this.records.record(u.id)), reason: u.reason });
    }
    return items.sort((a, b) => compareSessionNames(a.id, b.id));
  }

  /**
   * Every session tmux holds, read over a session's control client and with the options tether
   * keeps (src/tmux/sessions/session-options.ts): no process per request, let alone per session.
   */
  private listTmux(): Promise<TmuxSessionInfo[]> {
    return listSessions(this.cli, { query: (command) => this.system.queryTmux(command) });
  }

  private item(info: TmuxSessionInfo, live: SessionStatus | undefined): SessionItem {
    return sessionItemOf(info, {
      live,
      agent: this.agents.current(info.name),
      stop: this.agents.stopOf(info.name),
      usage: this.agents.usageOf(info.name),
      clients: this.clients(info.name),
      changes: this.workspaces?.summary(info, live?.lastOutputAt ?? null) ?? null,
    });
  }

  /** One session, as `list` gives it; `session-not-found` when there is none. */
  async get(id: string): Promise<SessionItem> {
    const item = isValidSessionName(id) ? (await this.list()).find((s) => s.id === id) : undefined;
    if (!item) throw notFound(id);
    return item;
  }

  /**
   * Creates a session running the configured agent `agent` (default: `[agent]`); without a name, the
   * first free `pi-<n>`. With `worktree`, in a git worktree made for it from the repository `cwd` is
   * in; a session that cannot be made takes the worktree back with it.
   */
  async create(input: CreateInput): Promise<{ id: string; name: string }> {
    if (input.agent !== undefined) this.checkAgent(input.agent);
    if (input.cwd !== undefined) await checkDirectory(input.cwd);
    if (input.name !== undefined && !isValidSessionName(input.name))
      throw new DomainError('invalid', `must match ${SESSION_NAME_RE.source}`, { field: 'name' });
    if (!input.worktree || !this.workspaces) return this.createIn(input, input.cwd, undefined);
    // A taken name is refused before a worktree is made for it.
    if (input.name !== undefined && this.system.hasSession(input.name)) throw sessionExists(input.name);
    return this.workspaces.around(input.cwd, input.worktree, (cwd, worktree) => this.createIn(input, cwd, worktree));
  }

  private async createIn(
    input: CreateInput,
    cwd: string | undefined,
    worktree: SessionWorktree | undefined,
  ): Promise<{ id: string; name: string }> {
    const options = {
      ...(input.project !== undefined ? { project: input.project } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      agent: input.agent ?? DEFAULT_AGENT_NAME,
      ...(worktree !== undefined ? { worktree } : {}),
    };
    if (input.name !== undefined) {
      await this.createOne(input.name, options);
      return { id: input.name, name: input.name };
    }
    for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
      const name = await this.freeName();
      try {
        await this.createOne(name, options);
        return { id: name, name };
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'session-exists')) throw err;
        // Someone took the name between the look and the create: look again.
      }
    }
    throw new DomainError('session-exists', 'no free session name was found; pass a name');
  }

  /** An agent name that is not configured is refused, naming the ones that are. */
  private checkAgent(agent: string): void {
    const names = this.catalog.names();
    if (names.includes(agent)) {
      const problem = this.catalog.problem(agent);
      if (problem !== null) throw new DomainError('invalid', `the agent "${agent}" cannot be started: ${problem}`, { field: 'agent' });
      return;
    }
    const shown = JSON.stringify([...agent].length > MAX_QUOTED_AGENT ? `${[...agent].slice(0, MAX_QUOTED_AGENT).join('')}…` : agent);
    throw new DomainError('invalid', `no agent named ${shown} is configured; the configured agents are: ${names.join(', ')}`, {
      field: 'agent',
    });
  }

  /** Creates one session; tmux failing to create it is a 503 that says why. */
  private async createOne(name: string, options: Parameters<SidecarSystem['createSession']>[2]): Promise<void> {
    await this.system.createSession(name, 'api', options);
  }

  private async freeName(): Promise<string> {
    const taken = new Set((await this.listTmux()).map((s) => s.name));
    for (const id of this.system.sessionIds()) taken.add(id);
    let n = 1;
    while (taken.has(`${this.namePrefix}-${n}`)) n++;
    return `${this.namePrefix}-${n}`;
  }

  /** Throws session-not-found unless `id` is a tether session with an actor (adopted now when tmux holds it: `knows`). */
  private async known(id: string): Promise<void> {
    if (!isValidSessionName(id) || !(await this.system.knows(id))) throw notFound(id);
  }

  /**
   * Sets the description by hand (an empty one clears it); auto-naming never overrides it.
   * Without one, changes nothing. Answers the description in effect.
   */
  async describe(id: string, description?: string): Promise<string> {
    await this.known(id);
    const option = SESSION_OPTIONS.description;
    if (description === undefined) return (await readUserOption(this.cli, id, option).catch(() => null)) ?? '';
    if (description === '') await unsetUserOption(this.cli, id, option);
    else await setUserOption(this.cli, id, option, description);
    // Set by hand: automatic naming never overrides it.
    await setUserOption(this.cli, id, SESSION_OPTIONS.descriptionSource, 'manual');
    this.system.metaChanged(id);
    return description;
  }

  /** What a stream client is told about the session (`session-meta`). */
  async meta(id: string): Promise<{
    name: string;
    description?: string;
    createdAt: string;
    agent: string;
    state: 'running' | 'exited';
    exitStatus?: number;
    worktree: SessionWorktree | null;
  }> {
    const { description, createdAt: created, agent, worktree } = await readSessionOptions(this.cli, id);
    // Read last: the agent's state as it is now, after the reads above.
    const live = this.system.session(id);
    const exited = live?.exited ?? false;
    return {
      name: id,
      ...(description ? { description } : {}),
      createdAt: created ?? '',
      agent: agent ?? DEFAULT_AGENT_NAME,
      state: exited ? 'exited' : 'running',
      ...(exited && live?.exitStatus !== null && live?.exitStatus !== undefined ? { exitStatus: live.exitStatus } : {}),
      worktree,
    };
  }

  /** The same for a session that has an actor; null for one that has none (gone, or not adopted yet). */
  async metaIfKnown(id: string): Promise<Awaited<ReturnType<SessionsService['meta']>> | null> {
    return this.system.hasSession(id) ? await this.meta(id) : null;
  }

  /**
   * Starts a session's exited agent again in its pane, with the command, environment and
   * directory it was created with. Answers the agent's state once the pane was seen again:
   * `running`, or `exited` when the new agent exited at once. An agent that runs is refused
   * (`session-running`) and left alone.
   */
  async respawn(id: string): Promise<{ id: string; state: 'running' | 'exited'; exitStatus: number | null }> {
    await this.known(id);
    if (!(await this.system.respawnSession(id))) throw notFound(id);
    const live = this.system.session(id);
    if (!live) throw notFound(id);
    return { id, state: live.exited ? 'exited' : 'running', exitStatus: live.exited ? live.exitStatus : null };
  }

  /**
   * Deletes a session; with `worktree: 'remove'` its worktree too, refused first (nothing deleted)
   * when that would lose work and `force` is not given.
   */
  async remove(id: string, keepBuffer: boolean, opts: { worktree?: 'keep' | 'remove'; force?: boolean } = {}): Promise<void> {
    const worktree = opts.worktree === 'remove' && this.workspaces ? await this.workspaces.removable(id, opts.force === true) : null;
    if (isValidSessionName(id) && !this.system.sessionIds().includes(id) && this.records.unrestorable().some((u) => u.id === id)) {
      // It could not be restored: deleting it forgets it (its buffer goes too unless kept).
      this.deleted(id, keepBuffer);
    } else {
      await this.known(id);
      if (!(await this.system.deleteSession(id, keepBuffer))) throw notFound(id);
      this.deleted(id, keepBuffer);
    }
    if (worktree) await this.workspaces!.remove(worktree, opts.force === true);
  }

  /** Tells `listener` of each session deleted on purpose (its record, uploads and buffer go); returns the undo. */
  onDeleted(listener: (id: string, keepBuffer: boolean) => void): () => void {
    this.deletedListeners.add(listener);
    return () => this.deletedListeners.delete(listener);
  }

  private deleted(id: string, keepBuffer: boolean): void {
    for (const listener of this.deletedListeners) listener(id, keepBuffer);
  }

  /** The 40x12 text thumbnail of the agent pane. */
  async thumbnail(id: string): Promise<string> {
    await this.known(id);
    // Over the session's control client (no process) while it is linked, else as a process.
    const linked = this.system.captureVisible(id);
    const stdout = linked ? await linked.catch(() => this.captureByProcess(id)) : await this.captureByProcess(id);
    // Loaded on the first thumbnail: its grapheme segmenters load ICU's break rules (~2.5 MB
    // resident), which a daemon nobody asks for a thumbnail never needs.
    const { thumbnailFromCapture } = await import('../../tmux/screen/thumbnail.js');
    return thumbnailFromCapture(stdout.toString('utf8'));
  }

  private async captureByProcess(id: string): Promise<Buffer> {
    const target = this.system.session(id)?.input.paneId ?? `=${id}:`;
    return (await this.cli.run(['capture-pane', '-p', '-t', target])).stdout;
  }

  /**
   * Injects input into the agent pane, in order with everything sent before. Input to a session
   * whose agent exited is refused (`session-exited`). Input to a session
   * whose link is not up yet (just created, or being re-made) is held, in order, for up to
   * `linkWaitMs`, then refused with `tmux-unavailable`.
   *
   * A session with an actor is typed into before this function first waits: a turn's wait there
   * put the rest of the socket's read (tens of µs) ahead of every keystroke.
   */
  async input(id: string, message: InputMessage, linkWaitMs = INPUT_LINK_WAIT_MS): Promise<void> {
    if (!isValidSessionName(id) || !this.system.hasSession(id)) await this.known(id);
    const session = this.system.session(id);
    if (!session) throw new DomainError('tmux-unavailable', `session ${id} is not linked to tmux right now`);
    // tmux takes keys for a dead pane and drops them: say so instead.
    if (session.exited) throw new DomainError('session-exited', `the agent of session ${id} has exited: respawn it to type again`);
    try {
      // The lines are made once the pane is known; an unknown key name is refused as it comes up.
      await session.input.runWhenLinked((pane) => inputCommands(pane, message), linkWaitMs);
    } catch (err) {
      if (isDomainError(err, 'tmux-unavailable')) {
        throw new DomainError('tmux-unavailable', `session ${id} is not linked to tmux (waited ${Math.round(linkWaitMs / 1000)} s)`);
      }
      throw err;
    }
  }

  /** The agent's slash commands, as its adapter lists them (its built-ins, its command files, what it reported). */
  async commands(id: string): Promise<readonly SlashCommand[]> {
    await this.known(id);
    const agent = (await readSessionOptions(this.cli, id)).agent ?? DEFAULT_AGENT_NAME;
    return this.catalog.commands(id, agent);
  }
}
