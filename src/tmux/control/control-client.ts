/**
 * One tmux control-mode client (`tmux -u -C attach-session -t =<session>`) per session: the
 * pane's byte stream comes out of it as events, and commands go in with their replies matched.
 *
 * Invariants:
 * - One command per line, replies matched FIFO: tmux answers every command of a line with its
 *   own %begin/%end block, in order, and never interleaves a block with %output (measured on
 *   3.3a), so a reply marks an exact position in the stream.
 * - A command of a line that fails ends the line; the replies after it still reach their own
 *   callers (src/tmux/control/control-replies.ts).
 * - Lines are built by `buildControlCommand` (quoted, no separators, no newline); a command
 *   line is never assembled from user text by hand.
 * - The first reply after attach answers the attach itself, not one of ours.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ControlParser } from './control-codec.js';
import type { ControlEvent } from './control-events.js';
import { controlFailed, replyBody, ReplyQueue, type ControlReply } from './control-replies.js';
import { escapeArgvArg } from '../quote.js';
import type { TmuxTarget } from '../target.js';
import { controlLedgerOf } from './control-ledger.js';
import { gateTimeout, topologyGate } from '../topology-gate.js';

export type { ControlReply } from './control-replies.js';

/** Why the client went away: tmux said %exit, the process ended, or we closed it. */
export interface ControlClose {
  readonly reason: string;
  /** True when tmux refused the attach because the session does not exist. */
  readonly sessionGone: boolean;
  /**
   * True when the tmux server died under the client (a crash, a SIGKILL): tmux's client says
   * `%exit server exited unexpectedly`. A session killed on purpose (kill-session, kill-server)
   * detaches the client with a plain `%exit` first.
   */
  readonly serverLost: boolean;
}

/** tmux's client's words when its server went away without saying goodbye (client.c, "lost server"). */
const SERVER_LOST_RE = /server exited unexpectedly|lost server/i;

export interface ControlClientOptions {
  readonly target: TmuxTarget;
  readonly session: string;
  /** Every notification that is not a reply, in stream order. */
  readonly onEvent: (event: ControlEvent) => void;
  /** Called once, after every pending command was rejected. */
  readonly onClose: (close: ControlClose) => void;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Read synchronously when a reply is parsed (the stream position and tracked state). A
   * promise settles a microtask later, after later %output of the same read may already have
   * been handled, so a snapshot's position must be taken here, not when the caller resumes.
   */
  readonly mark?: () => unknown;
  /** The attach waits for this first (the session's pane being respawned with no control client). */
  readonly notBefore?: Promise<void>;
}

/** Most commands in flight at once; a caller past it gets an error instead of a queue. */
export const MAX_PENDING_COMMANDS = 1024;
/** How much of tmux's stderr is kept to explain a failure. */
const STDERR_KEEP_BYTES = 4096;
/** How long an attach or a detach may hold the topology gate (a hung tmux must not block it). */
const ATTACH_GATE_MS = 15_000;

export class ControlClient {
  /** The `tmux -C` process, once the topology gate let it start. */
  private child: ChildProcessWithoutNullStreams | null = null;
  /** Lines written before the process started. */
  private queued: string[] = [];
  private readonly parser: ControlParser;
  private readonly pending = new ReplyQueue();
  private readonly opts: ControlClientOptions;
  private attachReplySeen = false;
  /** tmux answered the attach with success: the client is attached and its leaving notifies. */
  private attachedOk = false;
  private closed = false;
  private markGone: () => void = () => undefined;
  private readonly gonePromise = new Promise<void>((resolve) => (this.markGone = resolve));
  private closeReason: string | null = null;
  private closeRequested = false;
  private sessionGone = false;
  private serverLost = false;
  private stderr = '';
  /** Resolves once tmux acknowledged the attach (or rejects when it failed). */
  readonly attached: Promise<void>;
  private attachSettle!: { resolve: () => void; reject: (err: Error) => void };

  private constructor(opts: ControlClientOptions) {
    this.opts = opts;
    this.attached = new Promise<void>((resolve, reject) => {
      this.attachSettle = { resolve, reject };
    });
    // Nobody may be waiting on `attached`; its failure is also reported through onClose.
    this.attached.catch(() => undefined);
    this.parser = new ControlParser((event) => this.onParserEvent(event));
    // The handshake runs as a reader of the topology gate: none of tether's notifying commands
    // runs until tmux answered the attach (or gave up), which tmux 3.3a needs to not crash.
    const begin = (): void =>
      void topologyGate(opts.target).read(async () => {
        if (this.closed) return;
        this.start();
        await Promise.race([this.attached.catch(() => undefined), this.gonePromise, gateTimeout(ATTACH_GATE_MS)]);
      });
    if (opts.notBefore) void opts.notBefore.then(begin, begin);
    else begin();
  }

  /** Resolves once the client is closed and its tmux process (if one started) is gone. */
  get gone(): Promise<void> {
    return this.gonePromise;
  }

  private start(): void {
    const opts = this.opts;
    const args = ['-u', ...opts.target.socketArgs, '-C', 'attach-session', '-t', escapeArgvArg(`=${opts.session}`)];
    const child = spawn(opts.target.bin, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
    this.child = child;
    // Recorded until it ends, so that a daemon after this one can end it if this one dies first.
    const ledger = controlLedgerOf(opts.target);
    const pid = child.pid;
    if (ledger && pid !== undefined) {
      ledger.add(pid);
      child.once('exit', () => ledger.remove(pid));
    }
    child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEEP_BYTES) this.stderr += chunk.toString('utf8');
    });
    child.stdin.on('error', () => undefined); // EPIPE after tmux exits: reported by 'close'
    child.on('error', (err) => this.finish(`tmux could not be started: ${err.message}`));
    child.on('close', (code, signal) => {
      const why = this.stderr.trim() || `tmux control client ended (${signal ?? `exit ${code}`})`;
      this.finish(this.closeReason ?? why);
    });
    for (const line of this.queued.splice(0)) child.stdin.write(line);
  }

  /** Spawns the control client; `attached` settles when tmux answered the attach. */
  static attach(opts: ControlClientOptions): ControlClient {
    return new ControlClient(opts);
  }

  /** The tmux server this client attaches to. */
  get target(): TmuxTarget {
    return this.opts.target;
  }

  /** The child's pid, for logs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private write(data: string): void {
    if (this.child) this.child.stdin.write(data);
    else this.queued.push(data);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one command line (from `buildControlCommand`) and resolves with its reply. */
  async command(line: string): Promise<ControlReply> {
    return (await this.commandList([line]))[0]!;
  }

  /**
   * Sends several commands on one line: tmux runs a line's commands back to back, with no pane
   * output handled in between, so their replies describe one instant (one reply each, in order).
   * The lines must parse (they are ours, built by `buildControlCommand`).
   */
  commandList(lines: readonly string[]): Promise<ControlReply[]> {
    if (lines.length === 0) return Promise.resolve([]);
    if (this.closed) return Promise.reject(controlFailed('tmux control client is closed'));
    if (lines.some((l) => l.includes('\n') || l.includes('\r'))) {
      return Promise.reject(controlFailed('a control command line must be a single line'));
    }
    if (this.pending.size + lines.length > MAX_PENDING_COMMANDS) {
      return Promise.reject(controlFailed('too many tmux commands in flight'));
    }
    const replies = this.pending.expect(lines.length);
    this.write(lines.join(' ; ') + '\n');
    return Promise.all(replies);
  }

  /** Like `command`, but a %error reply rejects with tmux's message. */
  async run(line: string): Promise<Buffer> {
    return replyBody(await this.command(line));
  }

  /** Detaches: tmux ends a control client whose input closes. The session keeps running. */
  close(reason = 'closed by tether'): void {
    if (this.closed || this.closeRequested) return;
    this.closeReason = reason;
    this.closeRequested = true;
    if (!this.child) {
      // Never started (still waiting at the gate): nothing to detach.
      this.finish(reason);
      return;
    }
    this.leave();
  }

  /**
   * Detaches: a client leaving notifies the other control clients (%client-detached), so it
   * leaves as a writer of the topology gate, and holds it until its process is gone.
   */
  private leave(): void {
    const child = this.child;
    if (!child) return;
    const go = async (): Promise<void> => {
      child.stdin.end();
      // A client that does not go away on its own within a moment is ended; we started it.
      const timer = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      }, 2000);
      timer.unref();
      await Promise.race([this.gonePromise, gateTimeout(ATTACH_GATE_MS)]);
    };
    if (this.attachReplySeen) {
      if (this.attachedOk) void topologyGate(this.opts.target).write(go);
      else void go(); // refused: never attached, it notifies nobody
      return;
    }
    // Still in its handshake: tmux may have attached it already (the answer on its way), and a
    // client that leaves attached notifies the others, some of them perhaps in their handshake
    // too. So it leaves once its own answer came, as a writer like any attached client.
    // A tmux that never answers is left at once (the clock of the gate's own wait).
    void Promise.race([this.attached.catch(() => undefined), this.gonePromise, gateTimeout(ATTACH_GATE_MS)]).then(() => {
      if (this.attachedOk) void topologyGate(this.opts.target).write(go);
      else if (!this.closed) void go();
    });
  }

  private onData(chunk: Buffer): void {
    try {
      this.parser.push(chunk);
    } catch (err) {
      this.closeReason = `tmux control stream unreadable: ${(err as Error).message}`;
      this.child?.kill('SIGTERM');
    }
  }

  private onParserEvent(event: ControlEvent): void {
    if (event.type === 'reply') {
      if (!this.attachReplySeen) {
        this.attachReplySeen = true;
        if (event.ok) {
          this.attachedOk = true;
          this.attachSettle.resolve();
        } else {
          const why = event.body.toString('utf8').trim();
          if (/can't find session/i.test(why)) this.sessionGone = true;
          this.closeReason = `tmux refused the attach: ${why}`;
          this.attachSettle.reject(controlFailed(this.closeReason));
        }
        return;
      }
      this.pending.settle(event.ok, event.body, this.opts.mark?.());
      return;
    }
    if (event.type === 'exit') {
      // %exit says the same whether the session was killed or the server went away; the
      // owner asks tmux which (has-session) rather than guessing from the stream.
      this.closeReason ??= event.reason === null ? 'tmux ended the control client' : `tmux: ${event.reason}`;
      if (event.reason !== null && SERVER_LOST_RE.test(event.reason)) this.serverLost = true;
    }
    this.opts.onEvent(event);
  }

  private finish(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    const err = controlFailed(reason);
    this.attachSettle.reject(err);
    this.pending.rejectAll(err);
    this.opts.onClose({ reason, sessionGone: this.sessionGone, serverLost: this.serverLost || SERVER_LOST_RE.test(this.stderr) });
    this.markGone();
  }
}
