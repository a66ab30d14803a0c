/**
 * The actor system against real tmux on a private socket: sessions as actors, the control
 * link, the stream's positions, pane death, sessions killed from outside, tmux going away.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RingChunk } from '../../src/stream/ring.js';
import { SidecarSystem } from '../../src/actors/system.js';
import { silentLogger } from '../../src/log.js';
import { sendKeysHexCommands } from '../../src/tmux/pane/input.js';
import { createSession } from '../../src/tmux/sessions/session-create.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';
import { livePaneOf } from '../helpers/live-pane.js';

describe('sidecar system on real tmux', () => {
  let tmux: PrivateTmux;
  let system: SidecarSystem;
  let agent: string[];

  beforeEach(async () => {
    tmux = await privateTmux();
    agent = ['/bin/cat'];
    system = new SidecarSystem({
      cli: tmux.cli,
      target: tmux.target,
      ringBytes: 1 << 20,
      agent: () => ({ command: agent, env: {}, cwd: tmux.dir }),
      now: Date.now,
      log: silentLogger,
    });
    system.start();
    await system.booted();
  });
  afterEach(async () => {
    await system.stop();
    await tmux.cleanup();
  });

  const linked = (id: string) => system.status().sessions.find((s) => s.id === id)?.linked === true;

  it('streams the agent pane as contiguous chunks whose seq is the byte position', async () => {
    agent = ['/bin/sh', '-c', 'stty raw -echo; exec cat'];
    await system.createSession('s1', 'api');
    await eventually(() => linked('s1'));
    const rt = livePaneOf(system, 's1');
    const chunks: RingChunk[] = [];
    rt.stream.subscribe({ chunk: (c) => chunks.push(c), gap: () => undefined });
    const start = rt.stream.position;
    const text = Buffer.from('héllo; #{pane_id} $HOME \x1b[31mred\x1b[0m\r\n', 'utf8');
    // Give the pane's `stty raw -echo` a moment, then type through the control link.
    await eventually(async () => (await tmux.tmux('display', '-p', '-t', '=s1:', '#{pane_current_command}')).trim() === 'cat');
    await rt.run(sendKeysHexCommands(rt.paneId!, text));
    // Chunks go out at the end of the event-loop turn: wait for what a listener received.
    await eventually(() => chunks.reduce((n, c) => n + c.data.length, 0) >= text.length);
    const got = Buffer.concat(chunks.map((c) => c.data));
    expect(got.toString('latin1')).toBe(text.toString('latin1'));
    let pos = start;
    for (const c of chunks) {
      expect(c.start).toBe(pos);
      expect(c.end).toBe(pos + c.data.length);
      pos = c.end;
    }
    expect(Number.isSafeInteger(pos)).toBe(true);
    // tmux still runs our session, and nothing was read as a command.
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim()).toBe('s1');
  });

  it('reports the pane exited when the agent ends, and the session stays listed', async () => {
    agent = ['/bin/sh', '-c', 'sleep 0.3; exit 3'];
    await system.createSession('dies', 'api');
    await eventually(() => system.status().sessions.find((s) => s.id === 'dies')?.state === 'exited', 15_000);
    // tmux can report the pane dead a moment before its exit status (the machine takes it then).
    await eventually(() => system.status().sessions.find((x) => x.id === 'dies')?.exitStatus === 3, 15_000);
    expect(system.sessionIds()).toEqual(['dies']);
  });

  it('forgets a session killed from a shell', async () => {
    await system.createSession('k1', 'api');
    await system.createSession('k2', 'api');
    await eventually(() => linked('k1') && linked('k2'));
    await tmux.tmux('kill-session', '-t', '=k1');
    await eventually(() => system.sessionIds().join(',') === 'k2', 15_000);
  });

  it('adopts a session created outside, and deletes a session it was asked to', async () => {
    await createSession(tmux.cli, { name: 'outside', command: ['/bin/cat'], createdAt: new Date().toISOString() });
    system.requestRescan();
    await eventually(() => system.sessionIds().includes('outside'));
    await eventually(() => linked('outside'));
    expect(await system.deleteSession('outside', false)).toBe(true);
    expect(system.sessionIds()).toEqual([]);
    await expect(tmux.tmux('has-session', '-t', '=outside')).rejects.toThrow();
  });

  it('survives the tmux server going away, says so, does not spin, and serves again when it is back', async () => {
    await system.createSession('t1', 'api');
    await eventually(() => linked('t1'));
    await tmux.tmux('kill-server');
    // The session died with its server: forgotten, not kept retrying; the problem is reported.
    await eventually(() => system.status().tmuxProblem !== null && system.sessionIds().length === 0, 15_000);
    // Back-off, not a busy loop: the link tries a handful of times in two seconds at most.
    const cpuBefore = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 2000));
    const cpu = process.cpuUsage(cpuBefore);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1000);
    await createSession(tmux.cli, { name: 'again', command: ['/bin/cat'], createdAt: new Date().toISOString() });
    await eventually(() => system.sessionIds().includes('again') && linked('again'), 15_000);
    expect(system.status().tmuxProblem).toBeNull();
  });
});
