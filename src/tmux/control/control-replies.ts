/**
 * The replies a control client waits for (src/tmux/control/control-client.ts), matched to their commands
 * in the order they were sent: tmux answers every command of a line with its own %begin/%end
 * block, in order.
 *
 * Invariant: a command of a line that fails (%error) ends its line: tmux drops the commands after
 * it without a word (cmd-queue.c, `cmdq_remove_group`), so they are answered here as not run, and
 * the replies after them still reach their own callers.
 */
import { DomainError } from '../../errors.js';

/** A command's answer: `ok` false for %error; `body` the raw reply lines joined by "\n". */
export interface ControlReply {
  readonly ok: boolean;
  readonly body: Buffer;
  /** `mark()` taken when the reply was parsed, before any later %output was handled. */
  readonly mark: unknown;
}

/** Raised for commands on a closed client, a full pending queue, or a command tmux refused: `control-failed`. */
export const controlFailed = (message: string): DomainError => new DomainError('control-failed', message);

/** A reply's body; a %error reply throws with tmux's words. */
export function replyBody(reply: ControlReply): Buffer {
  if (!reply.ok) throw controlFailed(`tmux: ${reply.body.toString('utf8').trim() || 'command failed'}`);
  return reply.body;
}

/** The reply of a command tmux dropped because an earlier command of its line failed. */
const NOT_RUN = Buffer.from('not run: an earlier command of its line failed');

interface Waiter {
  readonly resolve: (reply: ControlReply) => void;
  readonly reject: (err: Error) => void;
  /** The line the command was sent in. */
  readonly line: object;
}

export class ReplyQueue {
  private readonly waiting: Waiter[] = [];

  /** Commands sent and not answered yet. */
  get size(): number {
    return this.waiting.length;
  }

  /** The replies of one line of `count` commands, in order. */
  expect(count: number): Promise<ControlReply>[] {
    const line = {};
    return Array.from(
      { length: count },
      () => new Promise<ControlReply>((resolve, reject) => this.waiting.push({ resolve, reject, line })),
    );
  }

  /** tmux's answer to the oldest command still waiting. */
  settle(ok: boolean, body: Buffer, mark: unknown): void {
    const waiter = this.waiting.shift();
    if (!waiter) return;
    waiter.resolve({ ok, body, mark });
    // A failed command took the rest of its line with it: those get no reply from tmux.
    if (ok) return;
    while (this.waiting[0]?.line === waiter.line) this.waiting.shift()!.resolve({ ok: false, body: NOT_RUN, mark });
  }

  /** Every command still waiting fails with `err` (the client went away). */
  rejectAll(err: Error): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(err);
  }
}
