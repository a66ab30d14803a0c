/**
 * The baselines' side of the bench tmux: a bare control-mode client (what tether is compared with
 * for the cost of reading a pane) and a session tether does not know about.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { BenchTmux } from './harness.js';

/** A bare `tmux -C` client on the bench tmux: raw stdout, commands written on stdin. */
export class BareControlReader {
  readonly child: ChildProcessWithoutNullStreams;
  onData: ((bytes: Buffer) => void) | null = null;
  readonly exited: Promise<void>;

  constructor(tmux: BenchTmux, session: string) {
    this.child = spawn('tmux', ['-S', tmux.socket, '-C', 'attach-session', '-t', `=${session}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => this.onData?.(d));
    this.child.stderr.resume();
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  command(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A detached session on the bench tmux that tether does not know about (the baseline's pane). */
export async function baselineSession(tmux: BenchTmux, name: string): Promise<void> {
  // history-limit applies to panes made after it is set: the same 10000 lines tether gives its panes.
  await tmux.tmux('set-option', '-g', 'history-limit', '10000');
  await tmux.tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', '/bin/sh');
}
