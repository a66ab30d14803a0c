/**
 * How the daemon keeps a tmux server it starts out of its own systemd service
 * (src/tmux/server-scope.ts): which control group counts as a service, the one-time probe, and
 * TmuxCli running only server-starting commands through the launcher, falling back to plain
 * tmux when the launcher fails before tmux ran. Real tmux on a private socket; the launchers are
 * small scripts standing in for systemd-run (the real one is exercised in service-survival.test.ts).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TmuxCli } from '../../src/tmux/exec.js';
import { chooseServerScope, scopeArgv, serviceOfCgroup } from '../../src/tmux/server-scope.js';
import { createSession } from '../../src/tmux/sessions/session-create.js';
import { usePrivateTmux } from '../helpers/tmux-fixture.js';

describe('which control group is a service', () => {
  it('reads the unified line, else cgroup v1 name=systemd, and only a .service counts', () => {
    expect(serviceOfCgroup('0::/user.slice/user-1000.slice/user@1000.service/app.slice/tether.service\n')).toBe('tether.service');
    expect(serviceOfCgroup('9:name=systemd:/tt1/app.slice/tether.service\n8:pids:/\n0::/tt1/app.slice/tether.service\n')).toBe(
      'tether.service',
    );
    expect(serviceOfCgroup('12:pids:/\n1:name=systemd:/system.slice/foo.service\n')).toBe('foo.service');
    expect(serviceOfCgroup('0::/user.slice/user-1000.slice/session-3.scope\n')).toBeNull();
    expect(serviceOfCgroup('0::/\n')).toBeNull();
    expect(serviceOfCgroup('')).toBeNull();
  });

  it('a fresh scope name for each start, tmux after the end of the options', () => {
    const a = scopeArgv();
    expect(a.slice(0, 5)).toEqual(['systemd-run', '--user', '--scope', '--quiet', '--collect']);
    expect(a[a.length - 1]).toBe('--');
    expect(scopeArgv().find((x) => x.startsWith('--unit='))).not.toBe(a.find((x) => x.startsWith('--unit=')));
  });
});

describe('the launcher around server-starting tmux commands', () => {
  // The launchers and their marks live beside the tmux socket, in the server's temp dir.
  const tmux = usePrivateTmux();
  let dir: string;
  let marks: string;
  let passing: string;
  let failing: string;

  beforeAll(() => {
    dir = tmux.dir;
    marks = join(dir, 'marks');
    writeFileSync(marks, '');
    // Stands in for systemd-run: notes that it ran, skips its options up to "--", runs the rest.
    passing = join(dir, 'passing-run');
    writeFileSync(passing, `#!/bin/sh\necho ran >> ${JSON.stringify(marks)}\nwhile [ "$1" != "--" ]; do shift; done; shift\nexec "$@"\n`);
    failing = join(dir, 'failing-run');
    writeFileSync(failing, '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n');
    for (const f of [passing, failing]) chmodSync(f, 0o755);
  });

  const cgroupFile = (text: string) => {
    const f = join(dir, `cgroup-${Math.random()}`);
    writeFileSync(f, text);
    return f;
  };

  it('no scope outside a service; a launcher that fails its probe is not used, and the log says why', async () => {
    const outside = await chooseServerScope({
      tmuxBin: 'tmux',
      systemdRun: passing,
      cgroupFile: cgroupFile('0::/user.slice/session-2.scope\n'),
    });
    expect(outside).toMatchObject({ launcher: null, service: null });
    const broken = await chooseServerScope({
      tmuxBin: 'tmux',
      systemdRun: failing,
      cgroupFile: cgroupFile('0::/app.slice/tether.service\n'),
    });
    expect(broken.launcher).toBeNull();
    expect(broken.why).toContain('Failed to connect to bus');
    const missing = await chooseServerScope({
      tmuxBin: 'tmux',
      systemdRun: join(dir, 'nothing'),
      cgroupFile: cgroupFile('0::/a/tether.service\n'),
    });
    expect(missing.launcher).toBeNull();
  });

  it('only new-session goes through the launcher; the server and the session come up as without it', async () => {
    const choice = await chooseServerScope({ tmuxBin: 'tmux', systemdRun: passing, cgroupFile: cgroupFile('0::/a/tether.service\n') });
    expect(choice.service).toBe('tether.service');
    expect(choice.launcher).not.toBeNull();
    writeFileSync(marks, '');
    const cli = new TmuxCli(tmux.target, { serverLauncher: choice.launcher! });
    const { paneId } = await createSession(cli, { name: 'scoped', command: ['/bin/sh'], createdAt: new Date().toISOString() });
    expect(paneId).toMatch(/^%\d+$/);
    await cli.run(['list-sessions']);
    expect(readFileSync(marks, 'utf8')).toBe('ran\n');
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim()).toBe('scoped');
  });

  it('a launcher that fails before tmux runs: the command runs without it, and the failure is told', async () => {
    const told: string[] = [];
    const cli = new TmuxCli(tmux.target, { serverLauncher: () => [failing, '--'], onLauncherFailed: (why) => told.push(why) });
    await createSession(cli, { name: 'plain', command: ['/bin/sh'], createdAt: new Date().toISOString() });
    expect(told).toEqual(['Failed to connect to bus: No medium found']);
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').sort()).toEqual(['plain', 'scoped']);
    // A tmux failure through a working launcher is tmux's, not retried: the name is taken.
    const through = new TmuxCli(tmux.target, { serverLauncher: () => [passing, '--'] });
    await expect(createSession(through, { name: 'plain', command: ['/bin/sh'], createdAt: new Date().toISOString() })).rejects.toThrow(
      /plain/,
    );
  });
});
