/**
 * The I/O behind the session machine's slots: creating and killing the tmux session, starting
 * its agent again in a dead pane, and the control link that turns the agent pane's %output into
 * the session's stream.
 *
 * Invariants: the link reports every change as an event (link.up, link.down, pane.exited,
 * pane.revived, session.gone; its first look at the pane, and each new program in it, always)
 * and never throws into the machine; output of panes other than
 * the agent pane is ignored; a link that ends is classified by asking tmux (has-session),
 * never by guessing from the control stream.
 */
import { fromCallback, fromPromise } from 'xstate';
import type {
  CreateSessionInput,
  DeleteSessionInput,
  LinkInput,
  RespawnPaneInput,
  RestoreSessionInput,
  SessionEvent,
} from '../machines/session.machine.js';
import type { Logger } from '../log.js';
import type { ControlEvent } from '../tmux/control-events.js';
import { ControlClient, type ControlClose } from '../tmux/control-client.js';
import { processExists } from '../process.js';
import { isNoServerError, isNoServerListeningError, isNoSessionError, type TmuxCli } from '../tmux/exec.js';
import { buildControlCommand } from '../tmux/quote.js';
import { AGENT_OPTION, CWD_OPTION, killSession, readUserOption, setUserOption } from '../tmux/sessions.js';
import { createSession, respawnPane } from '../tmux/session-create.js';
import type { TmuxTarget } from '../tmux/target.js';
import type { SessionRuntimes } from '../tmux/pane-link.js';
import { attentionOf, ExitWitness, outcomeKnown, PANE_STATE_FORMAT, parsePaneState, type SessionAttention } from './attention.js';

/** What runs in a new session's pane. */
export interface AgentLaunch {
  /** The configured agent's name (`default` for `[agent]`), kept on the session as `@tether-agent`. */
  readonly agent?: string;
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface SessionDeps {
  readonly cli: TmuxCli;
  readonly target: TmuxTarget;
  readonly runtimes: SessionRuntimes;
  /** The launch of a session's agent; `agent` names the configured one (absent: the session's own, else the default). */
  readonly agent: (id: string, agent?: string) => AgentLaunch;
  readonly now: () => number;
  readonly log: Logger;
  /** A control client saw tmux's %sessions-changed: discovery should look again now. */
  readonly sessionsChanged: () => void;
  /** Deletes the session's disk buffer (DELETE without keepBuffer). */
  readonly deleteBuffer: (id: string) => Promise<void>;
  /**
   * Bringing sessions back after their tmux server was lost (`[agent] restore`); absent: a lost
   * server ends its sessions.
   */
  readonly restore?: (id: string) => Promise<{ paneId: string }>;
  /** Something the session's human should hear about: its agent exited, it could not be restored (once each). */
  readonly attention?: (id: string, attention: SessionAttention) => void;
}

/**
 * tmux pauses a pane for a control client whose output is this many seconds behind; tether
 * then continues it and resyncs clients with a snapshot. tmux's own queue stays bounded.
 */
export const PAUSE_AFTER_SECONDS = 10;
/**
 * How often the link asks tmux whether the agent pane died. tmux 3.3a's format subscriptions
 * (`refresh-client -B`) do not report `pane_dead` changing (measured), and control mode has
 * no pane-died notice, so the link asks: one tiny command per session per interval.
 */
export const PANE_CHECK_MS = 1000;

/** What the link reads from tmux at set-up, in one control command (no tmux process started). */
interface LinkFacts {
  readonly serverPid: number | null;
  /** `@tether-pane`, when set in a pane-id shape. */
  readonly recordedPane: string | null;
  /** `@tether-seq`: the position an earlier run reserved (0 when unset or malformed). */
  readonly reservedSeq: number;
}

async function readLinkFacts(client: ControlClient, id: string): Promise<LinkFacts> {
  const body = await client.run(buildControlCommand(['display-message', '-p', '-t', `=${id}:`, '#{pid} #{@tether-pane} #{@tether-seq}']));
  const [pid = '', pane = '', seq = ''] = body.toString('utf8').trim().split(' ');
  const serverPid = /^\d+$/.test(pid) ? Number(pid) : null;
  const reserved = /^\d+$/.test(seq) ? Number(seq) : 0;
  return {
    serverPid: serverPid !== null && Number.isSafeInteger(serverPid) && serverPid > 0 ? serverPid : null,
    recordedPane: /^%\d+$/.test(pane) ? pane : null,
    reservedSeq: Number.isSafeInteger(reserved) ? reserved : 0,
  };
}

/**
 * The pane tether mirrors: `@tether-pane` when it still belongs to the session, else the first;
 * with when its window last had output (`#{window_activity}`, epoch ms, whole seconds; null when
 * tmux did not say), which tmux keeps across daemon restarts.
 */
async function findAgentPane(
  client: ControlClient,
  id: string,
  recorded: string | null,
): Promise<{ paneId: string; activityMs: number | null }> {
  const body = await client.run(buildControlCommand(['list-panes', '-s', '-t', `=${id}`, '-F', '#{pane_id} #{window_activity}']));
  const panes = new Map<string, number | null>();
  for (const line of body.toString('utf8').split('\n')) {
    const m = /^(%\d+) (\d*)$/.exec(line);
    if (m) panes.set(m[1]!, m[2] ? Number(m[2]) * 1000 : null);
  }
  if (panes.size === 0) throw new Error(`session ${id} has no panes`);
  const paneId = recorded !== null && panes.has(recorded) ? recorded : [...panes.keys()][0]!;
  const activityMs = panes.get(paneId) ?? null;
  return { paneId, activityMs: activityMs !== null && Number.isSafeInteger(activityMs) && activityMs > 0 ? activityMs : null };
}

/**
 * Why a link ended, as the machine's event: server.lost when the tmux server died under the
 * client (tmux's client says so: a crash or a SIGKILL, not a kill on purpose); gone when tmux runs
 * but lacks the session, or when the server the session lived in has exited after a kill on
 * purpose (killing the last session ends the server too); a lost link otherwise, retried.
 */
async function classifyClose(deps: SessionDeps, id: string, close: ControlClose, serverPid: number | null): Promise<SessionEvent> {
  // The server died under us (a crash, a SIGKILL): whatever a server on the socket says now (a
  // restore of another session may already have started a new one), this session was lost with it.
  // tmux's client says so only when its connection broke; the dead server may not be reaped yet.
  if (close.serverLost) return { type: 'server.lost', reason: close.reason };
  if (close.sessionGone) return { type: 'session.gone' };
  try {
    await deps.cli.run(['has-session', '-t', `=${id}`]);
    return { type: 'link.down', reason: close.reason };
  } catch (err) {
    if (isNoSessionError(err)) return { type: 'session.gone' };
    if (isNoServerError(err)) {
      // The server the session lived in has exited: the session went with it. A server still
      // alive (its socket deleted or moved, or too busy to accept) is worth waiting for. Not
      // linked yet, the session was seen moments ago; nothing listening means its server ended.
      if (serverPid !== null ? !processExists(serverPid) : isNoServerListeningError(err)) return { type: 'session.gone' };
      return { type: 'link.down', reason: 'the tmux server is not running' };
    }
    return { type: 'link.down', reason: `${close.reason}; tmux: ${(err as Error).message}` };
  }
}

function linkLogic(deps: SessionDeps, exits: ExitWitness) {
  return fromCallback<SessionEvent, LinkInput>(({ input, sendBack }) => {
    const id = input.id;
    const rt = deps.runtimes.ensure(id);
    const log = deps.log.child({ session: id });
    let stopped = false;
    let pane: string | null = null;
    /** What the link last reported; null until its first look, which is always reported. */
    let paneDead: boolean | null = null;
    let paneStatus: number | null = null;
    /** The pid of the pane's program last seen: a new one is a new program (a respawn). */
    let panePid: number | null = null;
    let deadSince: number | null = null;
    let checking = false;
    let checkTimer: NodeJS.Timeout | null = null;

    /**
     * Under load tmux 3.3a now and then misses the SIGCHLD of a pane's process: the pane is dead,
     * the process a zombie, and its exit status never known (measured: 1 in 3 under four busy
     * cores). tmux's SIGCHLD handler only reaps its children, so one more SIGCHLD makes it
     * collect the status; a spare one is harmless. Then look again soon.
     */
    const nudgeReaper = (): void => {
      if (rt.serverPid === null) return;
      try {
        process.kill(rt.serverPid, 'SIGCHLD');
      } catch {
        return; // the server is gone: the link's close says so
      }
      setTimeout(checkPane, 200).unref();
    };

    const checkPane = (): void => {
      if (stopped || checking || !pane || client.isClosed) return;
      checking = true;
      client
        .run(buildControlCommand(['display-message', '-p', '-t', pane, PANE_STATE_FORMAT]))
        .then((body) => {
          const state = parsePaneState(body.toString('utf8'));
          // tmux sets the exit status (or signal) a moment after it marks the pane dead: wait for it a little.
          if (state.dead && !outcomeKnown(state)) {
            if (deadSince === null) {
              deadSince = Date.now();
              nudgeReaper();
            }
            if (Date.now() - deadSince < 2 * PANE_CHECK_MS) return;
          }
          if (!state.dead) deadSince = null;
          if (stopped) return;
          const exit = exits.observe(rt, state);
          if (exit) deps.attention?.(id, exit);
          // A new program in the pane (respawned) is reported whatever it does: running, or dead
          // already. A death seen before tmux had its status is reported again once it is known.
          const newProgram = state.pid !== null && panePid !== null && state.pid !== panePid;
          const statusLearned = state.dead && paneDead === true && state.status !== null && paneStatus === null;
          if (state.pid !== null) panePid = state.pid;
          if (state.dead === paneDead && !statusLearned && !newProgram) return;
          // tmux 3.3a drops the output it had not yet written to control clients when a pane dies
          // (often the agent's last words), and writes "Pane is dead" on the screen itself: the
          // stream takes a gap, and clients resync from a snapshot of the dead pane's screen.
          if (state.dead && (paneDead !== true || newProgram)) {
            rt.stream.gap();
            rt.invalidateWarm();
          }
          paneDead = state.dead;
          paneStatus = state.status;
          sendBack(state.dead ? { type: 'pane.exited', status: state.status } : { type: 'pane.revived' });
        })
        .catch(() => undefined) // a closed client is reported by onClose
        .finally(() => {
          checking = false;
        });
    };

    const onEvent = (event: ControlEvent): void => {
      switch (event.type) {
        case 'output':
        case 'extended-output':
          if (event.paneId === pane) rt.output(event.data);
          return;
        case 'pause':
          if (event.paneId !== pane) return;
          // Bytes were dropped for us: continue, and make clients resync from a snapshot.
          rt.stream.gap();
          client.command(buildControlCommand(['refresh-client', '-A', `${event.paneId}:continue`])).catch(() => undefined);
          return;
        case 'sessions-changed':
          deps.sessionsChanged();
          return;
        case 'session-changed':
          // With detach-on-destroy off, tmux moves a client whose session died elsewhere.
          if (event.name !== id) client.close('tmux moved the control client to another session');
          return;
        case 'layout-change':
          // A resize changes the screen without a byte in the stream: a warm capture is stale.
          rt.invalidateWarm();
          checkPane();
          return;
        case 'window-renamed':
        case 'pane-mode-changed':
          // Things change when a pane dies or is respawned: look now rather than at the next tick.
          checkPane();
          return;
        default:
      }
    };

    const hold = rt.linkHold;
    const client = ControlClient.attach({
      target: deps.target,
      session: id,
      mark: () => rt.mark(),
      onEvent,
      ...(hold ? { notBefore: hold } : {}),
      onClose: (close) => {
        if (checkTimer) clearInterval(checkTimer);
        rt.detach(client);
        if (stopped) return;
        // Closed on purpose for a respawn (tmux 3.3a needs it): it comes back once the pane runs.
        if (rt.linkHold) log.debug({ reason: close.reason }, 'tmux control link closed for a respawn');
        else log.warn({ reason: close.reason }, 'tmux control link closed');
        void classifyClose(deps, id, close, rt.serverPid).then((event) => {
          log.debug(
            { event: event.type, serverLost: close.serverLost, sessionGone: close.sessionGone },
            'tmux control link close classified',
          );
          if (!stopped) sendBack(event);
        });
      },
    });
    rt.linking(client);

    void (async () => {
      try {
        await client.attached;
        const facts = await readLinkFacts(client, id);
        if (facts.serverPid !== null) rt.serverPid = facts.serverPid;
        const { paneId, activityMs } = await findAgentPane(client, id, facts.recordedPane);
        // Flow control and pane-death reports; an older tmux without them still streams.
        await client
          .run(buildControlCommand(['refresh-client', '-f', `pause-after=${PAUSE_AFTER_SECONDS}`]))
          .catch((err: Error) => log.warn({ err: err.message }, 'tmux has no pause-after; streaming without it'));
        if (stopped) return;
        // Positions continue above what any earlier run reserved for this session; the reservation
        // goes over the link while it is up (no tmux process per renewal).
        rt.reserve = (position) =>
          client.isClosed
            ? setUserOption(deps.cli, id, '@tether-seq', String(position))
            : client.run(buildControlCommand(['set-option', '-t', `=${id}:`, '@tether-seq', String(position)])).then(() => undefined);
        await rt.resumeReservation(facts.reservedSeq);
        if (stopped) return;
        pane = paneId;
        // Adopted after a restart, the pane's last output is what tmux knows of it (the list
        // keeps its order); output seen by this daemon always wins.
        if (activityMs !== null) rt.stream.noteEarlierOutput(activityMs);
        rt.attach(client, paneId);
        sendBack({ type: 'link.up', paneId });
        checkPane();
        checkTimer = setInterval(checkPane, PANE_CHECK_MS);
        checkTimer.unref();
        log.debug({ paneId, pid: client.pid }, 'tmux control link up');
      } catch (err) {
        // The close handler reports it; make sure the client is really gone.
        if (!client.isClosed) client.close(`link setup failed: ${(err as Error).message}`);
      }
    })();

    return () => {
      stopped = true;
      if (checkTimer) clearInterval(checkTimer);
      rt.detach(client);
      client.close();
    };
  });
}

/** The session machine's actors, bound to real tmux. */
export function createSessionImplementations(deps: SessionDeps) {
  // Exits are told from now on: a pane found dead that died before this daemon started is not news.
  const exits = new ExitWitness(Math.floor(deps.now() / 1000));
  return {
    actors: {
      createTmuxSession: fromPromise<{ paneId: string }, CreateSessionInput>(async ({ input }) => {
        const launch = deps.agent(input.id, input.agent);
        const created = await createSession(deps.cli, {
          name: input.id,
          command: launch.command,
          ...(launch.agent !== undefined ? { agent: launch.agent } : {}),
          env: { ...launch.env },
          ...((input.cwd ?? launch.cwd) !== undefined ? { cwd: input.cwd ?? launch.cwd } : {}),
          ...(input.project !== undefined ? { project: input.project } : {}),
          createdAt: new Date(deps.now()).toISOString(),
        });
        deps.log.info({ session: input.id, origin: input.origin }, 'session created');
        return { paneId: created.paneId };
      }),
      deleteTmuxSession: fromPromise<void, DeleteSessionInput>(async ({ input }) => {
        try {
          await killSession(deps.cli, input.id);
        } catch (err) {
          if (!isNoSessionError(err)) throw err;
        }
        // The session is gone now; a buffer that cannot be removed must not bring it back.
        if (!input.keepBuffer) {
          await deps
            .deleteBuffer(input.id)
            .catch((err: Error) => deps.log.warn({ session: input.id, err: err.message }, 'the session buffer could not be deleted'));
        }
        deps.log.info({ session: input.id, keepBuffer: input.keepBuffer }, 'session deleted');
      }),
      restoreTmuxSession: fromPromise<{ paneId: string }, RestoreSessionInput>(({ input }) => {
        if (!deps.restore) return Promise.reject(new Error('restoring sessions is turned off'));
        return deps.restore(input.id).catch((err: unknown) => {
          // A failure that marked the session unrestorable (not one met again) is told once.
          const attention = attentionOf(err);
          if (attention) deps.attention?.(input.id, attention);
          throw err;
        });
      }),
      respawnAgentPane: fromPromise<void, RespawnPaneInput>(async ({ input }) => {
        const rt = deps.runtimes.ensure(input.id);
        const paneId = input.paneId ?? rt.paneId;
        if (paneId === null) throw new Error(`session ${input.id} has no known agent pane`);
        // The agent as it was created: its command and environment, in the directory it started in
        // (recorded at creation; without the record tmux keeps the pane's own).
        const [cwd, agent] = await Promise.all([
          readUserOption(deps.cli, input.id, CWD_OPTION),
          readUserOption(deps.cli, input.id, AGENT_OPTION),
        ]);
        const launch = deps.agent(input.id, agent ?? undefined);
        await rt.restartPane(() =>
          rt.withoutLink(() =>
            respawnPane(deps.cli, { paneId, command: launch.command, env: { ...launch.env }, ...(cwd !== null ? { cwd } : {}) }),
          ),
        );
        deps.log.info({ session: input.id, paneId }, 'agent respawned');
      }),
      tmuxLink: linkLogic(deps, exits),
    },
    guards: {
      isRestoreEnabled: () => deps.restore !== undefined,
    },
  };
}
