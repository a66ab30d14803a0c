/**
 * One session's link to its agent pane in tmux: the control client that carries the pane's
 * output (src/tmux/pane/pane-connect.ts opens it), and the two queues through which commands and
 * input reach the pane over it. Who is waiting for the link waits here (`whenLinked`).
 *
 * Invariant: commands for one session go out one at a time, in the order they were asked
 * for, over the control client that carries the stream, so input keeps its order ("paste,
 * then Enter") and a snapshot's reply marks an exact stream position.
 */
import { DomainError } from '../../errors.js';
import { runCaptureLine, type CaptureStep } from '../screen/capture.js';
import type { ControlClient } from '../control/control-client.js';
import { replyBody } from '../control/control-replies.js';
import { buildControlCommand } from '../quote.js';
import { checkOptionName } from '../sessions/sessions.js';
import { takeSnapshot, type PaneSnapshot } from '../screen/snapshot.js';

/** No control client is linked right now (tmux restarting, session being created): `tmux-unavailable`. */
const sessionUnlinked = (id: string): DomainError => new DomainError('tmux-unavailable', `session ${id} is not linked to tmux right now`);

/** One session's pane link; the session's live pane (src/stream/live-pane.ts) holds it. */
export class PaneLink {
  private client: ControlClient | null = null;
  /** Every control client of this session not yet closed, linked or still attaching. */
  private readonly controlClients = new Set<ControlClient>();
  /** Set while the pane is respawned with no control client: a new link waits for it. */
  private unlinked: Promise<void> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** The last input sent or queued; input is ordered among itself (see runWhenLinked). */
  private inputQueue: Promise<unknown> = Promise.resolve();
  /** Inputs queued and not yet written (waiting for the link, or behind a multi-line input). */
  private inputsWaiting = 0;
  private readonly linkWaiters = new Set<() => void>();
  /** The pane tether mirrors, once linked. */
  paneId: string | null = null;
  /**
   * The pid of the tmux server the last link reached. When tmux later cannot be reached, a dead
   * server means the session died with it; a live one means only its socket is out of reach.
   */
  serverPid: number | null = null;

  constructor(readonly id: string) {}

  get linked(): boolean {
    return this.client !== null && !this.client.isClosed;
  }

  /**
   * Resolves once the control link is up (at once if it is), or rejects after `timeoutMs`:
   * a client that connects while the daemon is still linking waits for the link, not a retry.
   */
  whenLinked(timeoutMs: number): Promise<void> {
    if (this.linked) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.linkWaiters.delete(done);
        reject(sessionUnlinked(this.id));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.linkWaiters.add(done);
    });
  }

  /** A capture of the pane over the control client, in order with every command asked for before. */
  capture(): Promise<PaneSnapshot> {
    return this.commands((client) => {
      const pane = this.paneId;
      if (!pane) throw sessionUnlinked(this.id);
      return takeSnapshot(client, pane);
    });
  }

  /**
   * Runs `fn` with no control client attached to the session, and holds new links back until it
   * is done: tmux 3.3a crashes (the whole server) when a pane is respawned while a control client
   * follows its output (measured: within a few respawns). The link closes, and comes back after.
   */
  async withoutLink<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.unlinked = held;
    try {
      const clients = [...this.controlClients];
      for (const c of clients) c.close('the pane is being respawned');
      await Promise.all(clients.map((c) => c.gone));
      return await fn();
    } finally {
      if (this.unlinked === held) this.unlinked = null;
      release();
    }
  }

  /** What a new control client must wait for before it attaches (a respawn under way), if anything. */
  get linkHold(): Promise<void> | null {
    return this.unlinked;
  }

  /** A control client of this session was started (it counts until it closes). */
  linking(client: ControlClient): void {
    this.controlClients.add(client);
    void client.gone.then(() => this.controlClients.delete(client));
  }

  /** The link is up: commands and input go to `paneId` over `client`; whoever waited for it goes on. */
  attach(client: ControlClient, paneId: string): void {
    this.client = client;
    this.paneId = paneId;
    for (const done of [...this.linkWaiters]) done();
    this.linkWaiters.clear();
  }

  /** `client` closed: returns whether it was the linked one (then nothing is linked now). */
  detach(client: ControlClient): boolean {
    if (this.client !== client) return false;
    this.client = null;
    return true;
  }

  /**
   * Runs control command lines in order, after everything asked for before; a failing line
   * stops the rest of its batch and rejects.
   */
  commands<T>(fn: (client: ControlClient) => Promise<T>): Promise<T> {
    const run = (): Promise<T> => {
      const client = this.client;
      if (!client || client.isClosed) return Promise.reject(sessionUnlinked(this.id));
      return fn(client);
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs the input lines `make(paneId)` builds, in order with all input sent before, once the
   * link is up: a caller that arrives while the link is down waits up to `linkWaitMs` (counted
   * from its call), then gets `tmux-unavailable`. Later input queues behind it, so order
   * is kept whatever the wait.
   *
   * Input keeps its own order, apart from other commands (a capture for a snapshot may take tmux
   * 100 ms; a keystroke need not wait for its reply, as tmux runs a client's commands in order
   * anyway). And a one-line input (a keystroke, a key) with nothing waiting ahead of it on a live
   * link is written at once, without a trip through the queue: it is the echo's path.
   */
  runWhenLinked(make: (paneId: string) => readonly string[], linkWaitMs: number): Promise<void> {
    const client = this.client;
    const pane = this.paneId;
    if (this.inputsWaiting === 0 && client && !client.isClosed && pane) {
      let lines: readonly string[];
      try {
        lines = make(pane);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      if (lines.length === 1) {
        const sent = client.run(lines[0]!).then(() => undefined);
        this.inputQueue = sent.catch(() => undefined);
        return sent;
      }
    }
    const deadline = Date.now() + linkWaitMs;
    const run = async (): Promise<void> => {
      await this.whenLinked(Math.max(0, deadline - Date.now()));
      const linkedClient = this.client;
      const linkedPane = this.paneId;
      if (!linkedClient || linkedClient.isClosed || !linkedPane) throw sessionUnlinked(this.id);
      for (const line of make(linkedPane)) await linkedClient.run(line);
    };
    this.inputsWaiting++;
    const next = this.inputQueue.then(run, run).finally(() => this.inputsWaiting--);
    this.inputQueue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs one command line over the control client at once, outside the session's queue (tmux
   * answers a client's commands in order all the same): for reads whose order among the
   * session's commands does not matter, a listing of the server or a capture of the visible
   * screen, which then cost no process (a capture read as src/tmux/screen/capture.ts says). `%error`
   * rejects; so does a link that is down.
   */
  async query(step: CaptureStep): Promise<Buffer> {
    const client = this.client;
    if (!client || client.isClosed) throw sessionUnlinked(this.id);
    if (typeof step === 'string') return client.run(step);
    const [reply] = await runCaptureLine(client, [step]);
    return replyBody(reply!);
  }

  /**
   * Sets (or, for null, unsets) one of tether's user options of the session over the control
   * client, once the link is up (waiting up to `linkWaitMs`), in order with the session's other
   * commands. Over the control client a value has no length limit (a tmux process's command line
   * is at most 16 KiB), and it is one quoted argument: never a format, never a command list.
   */
  async setOption(option: string, value: string | null, linkWaitMs: number): Promise<void> {
    checkOptionName(option);
    const target = `=${this.id}:`;
    const line = buildControlCommand(
      value === null ? ['set-option', '-u', '-t', target, option] : ['set-option', '-t', target, option, value],
    );
    await this.whenLinked(linkWaitMs);
    await this.run([line]);
  }

  /** Runs each line in turn over the control client (`%error` rejects). */
  run(lines: readonly string[]): Promise<void> {
    return this.commands(async (client) => {
      for (const line of lines) await client.run(line);
    });
  }
}
