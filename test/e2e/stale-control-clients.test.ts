/**
 * A daemon that dies (SIGKILL, a crash) can leave its tmux control clients attached: tmux 3.3a
 * keeps one whose reader is gone with output still queued attached for good, and such a client
 * leaving later, at a moment of its own, can crash the server while another client is in its
 * handshake. The next daemon ends the ones its data dir's ledger names before it attaches
 * anything, and touches nothing else: not another program's control client, not a process that
 * merely holds a recorded pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RUN_DIR_NAMES } from '../../src/config/data-layout.js';
import { processExists } from '../../src/process.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { eventually } from '../helpers/tmux.js';

describe('control clients left attached by a daemon that died', () => {
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "stale-a"\n`, { samePort: true });
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  /** A `tmux -C` client of the test's own, attached to stale-a, its input held open. */
  const controlClient = (): ChildProcess => {
    const c = spawn('tmux', ['-S', fx.tmux.socket, '-C', 'attach-session', '-t', '=stale-a'], { stdio: ['pipe', 'pipe', 'ignore'] });
    c.stdout.resume();
    started.push(c);
    return c;
  };
  const controlPids = async (): Promise<number[]> =>
    (await fx.tmux.tmux('list-clients', '-F', '#{client_control_mode} #{client_pid}'))
      .split('\n')
      .filter((l) => l.startsWith('1 '))
      .map((l) => Number(l.slice(2)));

  it('are ended at the next start; other clients and processes are left alone', async () => {
    await fx.d.kill();
    const left = controlClient(); // stands for one the dead daemon left behind
    const other = controlClient(); // another program's control client: not in the ledger
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    started.push(bystander);
    await eventually(
      async () => {
        const pids = await controlPids();
        return pids.includes(left.pid!) && pids.includes(other.pid!);
      },
      20_000,
      50,
      "the test's two control clients attached",
    );
    appendFileSync(join(fx.home.dataDir, 'run', RUN_DIR_NAMES.controlLedger), `${left.pid}\n${bystander.pid}\n`);

    await fx.startAgain();
    await eventually(() => left.exitCode !== null || left.signalCode !== null, 30_000, 50, 'the left-behind client to be ended');
    const pids = await controlPids();
    expect(pids, 'the left-behind client is no longer attached').not.toContain(left.pid);
    expect(pids, "another program's control client stays attached").toContain(other.pid);
    expect(processExists(bystander.pid!), 'a process that merely holds a recorded pid is not signalled').toBe(true);
    // The new daemon attached its own client to stale-a and serves it.
    await eventually(async () => (await controlPids()).length === 2, 20_000, 50, "the new daemon's client beside the other program's");
    const sessions = (await (await fx.d.get('/sessions')).json()) as { id: string }[];
    expect(sessions.map((s) => s.id)).toEqual(['stale-a']);
  }, 90_000);
});
