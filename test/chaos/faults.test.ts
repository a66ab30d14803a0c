/**
 * Faults a laptop really sees, against a real daemon: the tmux server killed and started
 * again, a pane's program killed, and the daemon's own state files damaged. The daemon stays
 * up where it can, says what is wrong, does not spin, and never silently resets its tokens
 * (which would lock the user out or let everyone in).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logTailOf, runCli, warningsOf } from '../helpers/daemon.js';
import { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "fault"\n`;

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

describe('faults around the daemon', () => {
  const fx = useDaemon(AGENT);

  it('a pane killed with SIGKILL: the session is exited, its clients are told and stay, the daemon goes on', async () => {
    expect(
      (await fx.d.get('/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"victim"}' })).status,
    ).toBe(201);
    const m = new Mirror(fx.d.base, fx.d.token, 'victim').connect();
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    const pid = Number((await fx.tmux.tmux('display', '-p', '-t', '=victim:', '#{pane_pid}')).trim());
    process.kill(pid, 'SIGKILL'); // the pane's own program, started by this test's daemon
    await eventually(() => m.received.some((r) => r.kind === 'meta' && r.frame.state === 'exited'), 15_000);
    expect(m.stream.status).toBe('open');
    const list = (await (await fx.d.get('/sessions')).json()) as { id: string; state: string }[];
    expect(list.find((s) => s.id === 'victim')?.state).toBe('exited');
    m.close();
    expect((await fx.d.get('/sessions/victim', { method: 'DELETE' })).status).toBe(204);
  });

  it('the tmux server killed: the daemon stays up, says so, does not spin, and serves again when tmux is back', async () => {
    await fx.tmux.tmux('kill-server');
    await eventually(
      async () => {
        const h = (await (await fx.d.get('/health')).json()) as { warnings: string[] };
        return h.warnings.includes('the tmux server is not running');
      },
      15_000,
      100,
    );
    const pid = fx.d.child.pid!;
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 3000));
    // Waiting for tmux costs next to nothing: well under a tenth of a core.
    expect(cpuSeconds(pid) - before).toBeLessThan(0.3);

    // tmux back, with a tether session made by the attach CLI.
    const attached = await runCli(['attach', 'fault', '--detach'], fx.home.env);
    expect(attached.code).toBe(0);
    await eventually(
      async () => {
        const h = (await (await fx.d.get('/health')).json()) as { warnings: string[] };
        return !h.warnings.some((w) => /tmux/i.test(w));
      },
      15_000,
      100,
    );
    expect(((await (await fx.d.get('/sessions')).json()) as { id: string }[]).map((s) => s.id)).toEqual(['fault']);
    const m = new Mirror(fx.d.base, fx.d.token, 'fault').connect();
    try {
      await eventually(() => m.kinds().includes('snapshot'), 15_000, 50, 'a snapshot of the session made while tmux was away');
    } catch (err) {
      // Say what stood: what the client got, whether tmux still runs the session, what the daemon warned of.
      const tmuxSays = await fx.tmux.tmux('list-sessions', '-F', '#{session_name}').catch((e: Error) => e.message);
      throw new Error(
        `${(err as Error).message}\nthe client got: ${m.kinds().join(' ')} (status ${m.stream.status})\ntmux lists: ${tmuxSays}\ndaemon warnings:\n${warningsOf(fx.d, 20)}\n--- daemon log (tail) ---\n${logTailOf(fx.d)}`,
        { cause: err },
      );
    }
    m.stream.sendKeys('echo back-$((7*6))\r');
    await eventually(async () => (await m.text()).includes('back-42'), 15_000);
    m.close();
  }, 60_000);

  it('a truncated token store stops the start with a clear line, and is left as it was', async () => {
    await fx.d.stop();
    const store = join(fx.home.dataDir, 'auth', 'tokens.json');
    const original = readFileSync(store, 'utf8');
    const truncated = original.slice(0, Math.floor(original.length / 2));
    writeFileSync(store, truncated);
    const run = await runCli(['serve'], fx.home.env, 20_000);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/tokens\.json.*corrupt/);
    expect(readFileSync(store, 'utf8')).toBe(truncated);
    // Put back, it starts again, with the same token as before.
    writeFileSync(store, original);
    const token = fx.d.token;
    const again = await fx.startAgain();
    expect(again.token).toBe(token);
  }, 60_000);

  it('a config value of the wrong type stops the start with a line naming the key and the file', async () => {
    await fx.d.stop();
    const config = readFileSync(fx.home.configFile, 'utf8');
    writeFileSync(fx.home.configFile, `${config}\n[stream]\nring_kb = "lots"\n`);
    const run = await runCli(['serve'], fx.home.env, 20_000);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('ring_kb');
    expect(run.stderr).toContain(fx.home.configFile);
    writeFileSync(fx.home.configFile, config);
    await fx.startAgain();
  }, 60_000);
});
