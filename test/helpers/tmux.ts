/**
 * A private tmux server for a test: its socket lives in a fresh temp dir (`-S`), it is killed
 * through that socket only, and the dir is removed after. Never touches the user's server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { processExists } from '../../src/process.js';
import { TmuxCli } from '../../src/tmux/exec.js';
import type { TmuxTarget } from '../../src/tmux/target.js';
import { makesNotifications, topologyGate } from '../../src/tmux/topology-gate.js';

const run = promisify(execFile);

export interface PrivateTmux {
  readonly dir: string;
  readonly socket: string;
  readonly target: TmuxTarget;
  readonly cli: TmuxCli;
  /** Runs tmux on this server with an argv array; resolves with stdout. */
  tmux(...args: string[]): Promise<string>;
  /** The pane's visible text (capture-pane -p), trailing blank lines dropped. */
  capture(target: string): Promise<string>;
  /** Polls until `fn` returns true (or throws after `timeoutMs`). */
  cleanup(): Promise<void>;
}

export function privateTmux(): Promise<PrivateTmux> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-tmux-'));
  const socket = join(dir, 'tmux.sock');
  const target: TmuxTarget = { bin: 'tmux', socketArgs: ['-S', socket] };
  // A test's own notifying commands (killing a session "from a shell") take the topology gate
  // like tether's: tmux before 3.7 crashes on a notification during a control client's
  // handshake (src/tmux/topology-gate.ts), and the tests are about tether, not that bug.
  const exec = async (args: string[]): Promise<string> => (await run('tmux', ['-S', socket, ...args])).stdout;
  const tmux = (...args: string[]): Promise<string> =>
    makesNotifications([args]) ? topologyGate(target).write(() => exec(args)) : exec(args);
  return Promise.resolve({
    dir,
    socket,
    target,
    cli: new TmuxCli(target),
    tmux,
    capture: async (t) => (await tmux('capture-pane', '-p', '-t', t)).replace(/\n+$/, ''),
    cleanup: async () => {
      // kill-server can leave the server running for a while (panes that outlive SIGHUP, clients
      // of a daemon that was SIGKILLed), and a pane's program for longer (an agent saving its
      // session as it hangs up, into a home the test removes next); once the socket is gone
      // nothing could reach them again, so the server and the panes' programs this helper
      // started are waited for, then killed by their pids (a pane's whole process group).
      const pid = Number(
        (await run('tmux', ['-S', socket, 'display-message', '-p', '#{pid}']).catch(() => ({ stdout: '' }))).stdout.trim(),
      );
      const panes = (await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_pid}']).catch(() => ({ stdout: '' }))).stdout
        .split('\n')
        .map(Number)
        .filter((p) => Number.isSafeInteger(p) && p > 0);
      await run('tmux', ['-S', socket, 'kill-server']).catch(() => undefined);
      // Exited is enough: a zombie waiting for a slow init to reap it is gone (src/process.ts).
      const left = () => [pid, ...panes].filter((p) => Number.isSafeInteger(p) && p > 0 && processExists(p));
      for (let i = 0; i < 500 && left().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      for (const p of left()) {
        try {
          process.kill(p === pid ? p : -p, 'SIGKILL');
        } catch {
          process.kill(p, 'SIGKILL');
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/**
 * Waits until `fn` resolves truthy, polling every `everyMs`, for at most `timeoutMs` (generous:
 * a busy two-core machine is slow, and a passing wait costs only as long as the condition takes).
 * On timeout the error says what was awaited (`what`, else the condition's own source text),
 * for how long, and the last value or error seen.
 */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 15_000, everyMs = 25, what?: string): Promise<T> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      last = `condition still ${String(value)}`;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const awaited = what ?? fn.toString().replace(/\s+/g, ' ').slice(0, 300);
      const seen = last instanceof Error ? last.message : String(last);
      const err = new Error(`waited ${Date.now() - started} ms for ${awaited}: ${seen}`);
      if (last instanceof Error) err.cause = last;
      throw err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
