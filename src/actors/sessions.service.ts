/**
 * The sessions operations the REST routes and the stream use, on top of the actor system and
 * tmux. Session facts are read from tmux (P-6: no state store of our own), live facts (clients,
 * last output, agent state) from the actors.
 *
 * Invariant: every value a client sent reaches tmux only through the quoting layer (argv with
 * `escapeArgvArg`, control lines with `buildControlCommand`) or as hex bytes; unknown sessions
 * are `session-not-found` before any tmux command names them.
 */
import { randomBytes } from 'node:crypto';
import { BUILTIN_COMMANDS, type SlashCommand } from '../agent/builtin-commands.js';
import { ApiError } from '../errors.js';
import type { TmuxCli } from '../tmux/exec.js';
import { resolveKey, sendKeyCommands, sendKeysHexCommands } from '../tmux/keys.js';
import {
  isValidSessionName,
  listSessions,
  pasteCommands,
  readUserOption,
  setUserOption,
  unsetUserOption,
  type TmuxSessionInfo,
} from '../tmux/sessions.js';
import { thumbnailFromCapture } from '../tmux/thumbnail.js';
import { SessionUnavailableError } from './session-runtime.js';
import { SessionCreateError, type SidecarSystem } from './system.js';

/** One input message (the same over REST and WebSocket). */
export type SessionInput = { type: 'key'; name: string } | { type: 'keys'; data: string } | { type: 'paste'; data: string };

export interface SessionItem {
  id: string;
  name: string;
  description: string;
  state: 'running' | 'exited';
  agentState: 'thinking' | 'tool' | 'idle' | 'awaiting-input' | null;
  lastOutputAt: string | null;
  createdAt: string | null;
  clients: number;
  project: string | null;
}

/** What the sessions need of the agents (the agent hub): their state and reported commands. */
export interface SessionAgents {
  current(id: string): { value: NonNullable<SessionItem['agentState']> } | null;
  commands(id: string): readonly { name: string; description: string }[] | null;
}
const NO_AGENTS: SessionAgents = { current: () => null, commands: () => null };

/** Who set a description: by hand (PATCH) beats automatic naming. */
export const DESCRIPTION_SOURCE_OPTION = '@description-source';
/** How many `pi-<n>` names a create without a name tries before giving up. */
const MAX_NAME_ATTEMPTS = 16;

const notFound = (id: string) => new ApiError('session-not-found', `no session named "${id}"`);

export class SessionsService {
  constructor(
    private readonly system: SidecarSystem,
    private readonly cli: TmuxCli,
    private readonly namePrefix = 'pi',
    private readonly agents: SessionAgents = NO_AGENTS,
  ) {}

  /** The tether sessions tmux holds, with live facts. */
  async list(): Promise<SessionItem[]> {
    const infos = (await listSessions(this.cli)).filter((s) => s.isTether);
    const items = await Promise.all(infos.map((info) => this.item(info)));
    return items.sort((a, b) => a.id.localeCompare(b.id));
  }

  private async item(info: TmuxSessionInfo): Promise<SessionItem> {
    const live = this.system.status().sessions.find((s) => s.id === info.name);
    const description = (await readUserOption(this.cli, info.name, '@description').catch(() => null)) ?? '';
    return {
      id: info.name,
      name: info.name,
      description,
      state: live ? (live.state === 'exited' ? 'exited' : 'running') : info.paneDead ? 'exited' : 'running',
      agentState: this.agents.current(info.name)?.value ?? null,
      lastOutputAt: live?.lastOutputAt ? new Date(live.lastOutputAt).toISOString() : null,
      createdAt: info.createdAt,
      clients: live?.clients ?? 0,
      project: info.project,
    };
  }

  /** Creates a session; without a name, the first free `pi-<n>`. */
  async create(input: { name?: string; project?: string }): Promise<{ id: string; name: string }> {
    if (input.name !== undefined) {
      if (!isValidSessionName(input.name)) throw new ApiError('bad-request', 'body/name: must match ^[A-Za-z0-9_-]{1,64}$');
      await this.createOne(input.name, input.project);
      return { id: input.name, name: input.name };
    }
    for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
      const name = await this.freeName();
      try {
        await this.createOne(name, input.project);
        return { id: name, name };
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 'session-exists')) throw err;
        // Someone took the name between the look and the create: look again.
      }
    }
    throw new ApiError('session-exists', 'no free session name was found; pass a name');
  }

  /** Creates one session; tmux failing to create it is a 503 that says why. */
  private async createOne(name: string, project: string | undefined): Promise<void> {
    try {
      await this.system.createSession(name, 'api', project);
    } catch (err) {
      if (err instanceof SessionCreateError) throw new ApiError('tmux-unavailable', err.message);
      throw err;
    }
  }

  private async freeName(): Promise<string> {
    const taken = new Set((await listSessions(this.cli)).map((s) => s.name));
    for (const id of this.system.sessionIds()) taken.add(id);
    let n = 1;
    while (taken.has(`${this.namePrefix}-${n}`)) n++;
    return `${this.namePrefix}-${n}`;
  }

  /** Throws session-not-found unless `id` is a tether session with an actor. */
  private known(id: string): void {
    if (!isValidSessionName(id) || !this.system.sessionIds().includes(id)) throw notFound(id);
  }

  /** Sets the description by hand (an empty one clears it); auto-naming never overrides it. */
  async describe(id: string, description: string): Promise<void> {
    this.known(id);
    if (description === '') await unsetUserOption(this.cli, id, '@description');
    else await setUserOption(this.cli, id, '@description', description);
    await setUserOption(this.cli, id, DESCRIPTION_SOURCE_OPTION, 'manual');
    this.system.metaChanged(id);
  }

  /** What a stream client is told about the session (`session-meta`). */
  async meta(id: string): Promise<{ name: string; description?: string; createdAt: string }> {
    const [description, created] = await Promise.all([
      readUserOption(this.cli, id, '@description').catch(() => null),
      readUserOption(this.cli, id, '@created').catch(() => null),
    ]);
    return { name: id, ...(description ? { description } : {}), createdAt: created ?? '' };
  }

  async remove(id: string, keepBuffer: boolean): Promise<void> {
    this.known(id);
    if (!(await this.system.deleteSession(id, keepBuffer))) throw notFound(id);
  }

  /** The 40x12 text thumbnail of the agent pane. */
  async thumbnail(id: string): Promise<string> {
    this.known(id);
    const pane = this.system.runtimes.get(id)?.paneId;
    const target = pane ?? `=${id}:`;
    const { stdout } = await this.cli.run(['capture-pane', '-p', '-t', target]);
    return thumbnailFromCapture(stdout.toString('utf8'));
  }

  /** Injects input into the agent pane, in order with everything sent before. */
  async input(id: string, message: SessionInput): Promise<void> {
    this.known(id);
    const rt = this.system.runtimes.get(id);
    const pane = rt?.paneId;
    if (!rt || !pane) throw new ApiError('tmux-unavailable', `session ${id} is not linked to tmux right now`);
    let lines: string[];
    if (message.type === 'key') {
      const key = resolveKey(message.name);
      if (!key) throw new ApiError('bad-request', `body/name: unknown key name "${message.name.slice(0, 32)}"`);
      lines = sendKeyCommands(pane, key);
    } else if (message.type === 'keys') {
      lines = sendKeysHexCommands(pane, Buffer.from(message.data, 'utf8'));
    } else {
      lines = pasteCommands(pane, `tether-paste-${randomBytes(6).toString('hex')}`, message.data);
    }
    try {
      await rt.run(lines);
    } catch (err) {
      if (err instanceof SessionUnavailableError) throw new ApiError('tmux-unavailable', err.message);
      throw err;
    }
  }

  /** The agent's slash commands: pi's built-ins, then what its extension reported (extension commands, templates, skills). */
  commands(id: string): Promise<readonly SlashCommand[]> {
    this.known(id);
    const reported = this.agents.commands(id);
    if (!reported) return Promise.resolve(BUILTIN_COMMANDS);
    const names = new Set(BUILTIN_COMMANDS.map((c) => c.name));
    const extra = reported
      .filter((c) => !names.has(c.name) && names.add(c.name))
      .map((c) => ({ name: c.name, description: c.description }));
    return Promise.resolve([...BUILTIN_COMMANDS, ...extra]);
  }
}
