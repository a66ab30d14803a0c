/**
 * tmux 3.3a (and every release before 3.7) crashes, the whole server with every session, when
 * it sends a notification (%sessions-changed, %window-renamed, %client-detached, ...) to a
 * control client that is still in its handshake: the client is marked as a control client
 * before its control state exists (tmux commit e5a2a25, "Do not notify clients if not fully
 * initialized"). Measured here: a segfault at NULL+0x20 in control_write, a few times an hour
 * under the test suite's load.
 *
 * tether cannot stop notifications it does not cause, but it never causes one during its own
 * handshakes: per tmux server, control-client attaches (until tmux answered the attach) are
 * readers, which may overlap, and tether's commands that make notifications (creating or
 * killing sessions and windows, resizing, a control client leaving) are writers, which wait
 * for every attach in progress and hold new ones back. Waiters are served in arrival order.
 */
import type { TmuxTarget } from './target.js';

interface Waiter {
  readonly write: boolean;
  readonly go: () => void;
}

export class TopologyGate {
  private readers = 0;
  private writing = false;
  private readonly queue: Waiter[] = [];

  /** Runs `fn` as an attach: alongside other attaches, never during a writer. */
  read<T>(fn: () => Promise<T>): Promise<T> {
    return this.run(false, fn);
  }

  /** Runs `fn` as a notification-making command: alone. */
  write<T>(fn: () => Promise<T>): Promise<T> {
    return this.run(true, fn);
  }

  private async run<T>(write: boolean, fn: () => Promise<T>): Promise<T> {
    await new Promise<void>((go) => {
      this.queue.push({ write, go });
      this.pump();
    });
    try {
      return await fn();
    } finally {
      if (write) this.writing = false;
      else this.readers--;
      this.pump();
    }
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writing) {
      const next = this.queue[0]!;
      if (next.write) {
        if (this.readers > 0) return;
        this.writing = true;
      } else {
        this.readers++;
      }
      this.queue.shift();
      next.go();
    }
  }
}

const gates = new Map<string, TopologyGate>();

/** The gate of one tmux server (by its binary and socket arguments). */
export function topologyGate(target: TmuxTarget): TopologyGate {
  const key = [target.bin, ...target.socketArgs].join('\0');
  let gate = gates.get(key);
  if (!gate) {
    gate = new TopologyGate();
    gates.set(key, gate);
  }
  return gate;
}

/** tmux commands whose effects notify control clients. */
const NOTIFYING = new Set([
  'new-session',
  'kill-session',
  'rename-session',
  'new-window',
  'kill-window',
  'rename-window',
  'split-window',
  'kill-pane',
  'respawn-pane',
  'respawn-window',
  'resize-window',
  'resize-pane',
  'select-window',
  'select-pane',
  'link-window',
  'unlink-window',
  'move-window',
  'swap-window',
  'swap-pane',
  'break-pane',
  'join-pane',
  'detach-client',
  'switch-client',
  'kill-server',
  'select-layout',
  'copy-mode',
]);

/** Whether a command list makes notifications (so it runs as a writer). */
export function makesNotifications(commands: readonly (readonly string[])[]): boolean {
  return commands.some((c) => NOTIFYING.has(c[0] ?? ''));
}

/** Resolves after `ms` (for bounded waits: a hung tmux must not hold a gate forever). */
export function gateTimeout(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
