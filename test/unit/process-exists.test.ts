/**
 * `processExists` on real processes: a running one exists, a reaped one does not, and one that
 * exited but was not reaped (a zombie, as a daemonized tmux server is until a slow init reaps
 * it) does not either, though signal 0 still finds it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { processExists } from '../../src/process.js';
import { eventually } from '../helpers/tmux.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) if (processExists(pid)) process.kill(pid, 'SIGKILL');
});

/** Starts `sh -c script` and resolves with it and the first line it prints. */
function sh(script: string): Promise<{ pid: number; line: string }> {
  const child = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(child.pid!);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ pid: child.pid!, line: out.split('\n')[0]! });
    });
    child.on('error', reject);
  });
}

describe('processExists', () => {
  it('is true for a running process and false once it exited and was reaped', async () => {
    const { pid } = await sh('echo up; exec sleep 60');
    expect(processExists(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await eventually(() => !processExists(pid), 15_000, 10, 'the killed sleep gone');
  });

  it('is false for 0, negative and unsafe pids (process groups, not a process)', () => {
    expect([0, -1, -process.pid, 2 ** 60, 1.5].map(processExists)).toEqual([false, false, false, false, false]);
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'is false for a process that exited and waits to be reaped, which signal 0 still finds',
    async () => {
      // A subshell in the background exits a second later, when its parent has become `sleep`
      // (exec), which never reaps a child: the subshell stays a zombie until the sleep ends.
      const { line } = await sh('(sleep 1) & echo $!; exec sleep 60');
      const zombie = Number(line);
      expect(zombie).toBeGreaterThan(0);
      const state = () => {
        const stat = readFileSync(`/proc/${zombie}/stat`, 'latin1');
        return stat.charAt(stat.lastIndexOf(')') + 2);
      };
      expect(processExists(zombie)).toBe(true);
      await eventually(() => state() === 'Z', 15_000, 10, 'the background subshell to exit, unreaped');
      expect(processExists(zombie)).toBe(false);
      // Still in the process table: signal 0 finds it.
      expect(() => process.kill(zombie, 0)).not.toThrow();
    },
  );
});
