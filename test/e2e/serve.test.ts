/**
 * `tether serve` as a user runs it: a real daemon process, a private tmux server, real HTTP.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonHome, runCli, type DaemonHome, type TestDaemon } from '../helpers/daemon.js';
import { useDaemon, type DaemonFixture } from '../helpers/daemon-fixture.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const AGENT = `[agent]\ncommand = "/bin/cat"\ndefault_session = "pi-main"\n`;

interface Health {
  ok: boolean;
  status: string;
  sessions: number;
  sessionIds: string[];
  uptime: number;
  version: string;
  warnings: string[];
}

async function health(d: TestDaemon): Promise<Health> {
  const res = await d.get('/health');
  expect(res.status).toBe(200);
  return (await res.json()) as Health;
}

/** One test on a daemon of its own, started for it on a fresh tmux server and home. */
function withDaemon(name: string, test: (fx: DaemonFixture) => Promise<void>, toml = AGENT): void {
  describe(name, () => {
    const fx = useDaemon(toml);
    it(name, () => test(fx));
  });
}

describe('tether serve', () => {
  withDaemon('prints exactly one URL line, creates the default session and reports it in /health', async ({ d, tmux }) => {
    expect(d.url.protocol).toBe('http:');
    expect(d.url.hostname).toBe('127.0.0.1');
    expect(d.token.length).toBeGreaterThanOrEqual(32);
    const h = await health(d);
    expect(h).toMatchObject({ ok: true, status: 'ok', sessions: 1, sessionIds: ['pi-main'] });
    expect(await tmux.tmux('show-options', '-v', '-t', '=pi-main:', 'history-limit')).toBe('10000\n');
    expect(await tmux.tmux('display', '-p', '-t', '=pi-main:', '#{window_width}x#{window_height}')).toBe('120x40\n');
  });

  withDaemon('refuses /health without the right token', async ({ d }) => {
    const none = await fetch(`${d.base}/health`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toMatchObject({ error: 'unauthorized' });
    expect((await fetch(`${d.base}/health?token=wrong`)).status).toBe(401);
    expect((await fetch(`${d.base}/health?token=${d.token}`)).status).toBe(200);
  });

  withDaemon('picks up a session made by `tether attach --detach` within a second or two', async ({ d, home }) => {
    const made = await runCli(['attach', 'side-1', '--detach'], home.env);
    expect(made.code).toBe(0);
    await eventually(async () => (await health(d)).sessionIds.includes('side-1'), 15_000);
  });

  withDaemon('a session made by `tether attach` is served as soon as the list shows it, before discovery looked again', async (fx) => {
    // No session linked: no control client hears tmux tell of a new session; discovery looks once a second.
    expect((await fx.d.get('/sessions/pi-main', { method: 'DELETE' })).status).toBe(204);
    expect((await runCli(['attach', 'side-2', '--detach'], fx.home.env)).code).toBe(0);
    // At once, as a phone that just listed it would: its stream and a route of its own.
    const m = fx.mirror('side-2');
    const commands = await fx.d.get('/sessions/side-2/commands');
    expect(commands.status, await commands.clone().text()).toBe(200);
    await eventually(
      () => {
        if (m.kinds().includes('snapshot')) return true;
        throw new Error(`the client got: ${m.kinds().join(' ')} (status ${m.stream.status})`);
      },
      15_000,
      50,
      'a snapshot of side-2',
    );
    expect(m.stream.status).toBe('open');
  });

  withDaemon('reattaches every session after a SIGKILL, and loses none', async (fx) => {
    const { d: d1, home, tmux } = fx;
    expect((await runCli(['attach', 'work-a', '--detach'], home.env)).code).toBe(0);
    expect((await runCli(['attach', 'work-b', '--detach'], home.env)).code).toBe(0);
    await eventually(async () => (await health(d1)).sessions === 3, 15_000);
    // Every session's control client through its handshake first: tmux 3.3a to 3.7c crash when a
    // notification (here the dying clients' detaches) reaches a control client in its handshake
    // (docs/architecture.md "tmux, safely"); the kill below is to test tether's reattach, not that.
    await eventually(
      async () => {
        const clients = await tmux.tmux('list-clients', '-F', '#{client_control_mode} #{session_name}');
        const attached = new Set(
          clients
            .split('\n')
            .filter((l) => l.startsWith('1 '))
            .map((l) => l.slice(2)),
        );
        return ['pi-main', 'work-a', 'work-b'].every((name) => attached.has(name));
      },
      15_000,
      50,
      "the first daemon's control clients attached to the three sessions",
    );
    await d1.kill();
    const names = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').sort();
    expect(names).toEqual(['pi-main', 'work-a', 'work-b']);
    const d2 = await fx.startAgain();
    expect((await health(d2)).sessionIds).toEqual(['pi-main', 'work-a', 'work-b']);
    expect(d2.token).toBe(d1.token);
    const after = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').sort();
    expect(after).toEqual(['pi-main', 'work-a', 'work-b']);
  });

  withDaemon('leaves tmux sessions running on SIGTERM and exits 0', async ({ d, tmux }) => {
    expect(await d.stop()).toBe(0);
    expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim()).toBe('pi-main');
  });

  withDaemon(
    'refuses a second daemon for the same data dir (port 0 too), while the first keeps serving',
    async ({ d: first, home, tmux }) => {
      const second = await runCli(['serve'], home.env);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain('another tether daemon');
      expect(second.stdout).toBe('');
      expect((await health(first)).sessionIds).toEqual(['pi-main']);
      expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim()).toBe('pi-main');
    },
  );

  withDaemon(
    'bound elsewhere with TLS off, it warns at start and in /health',
    async ({ d }) => {
      const h = await health(d);
      expect(h.warnings.join('\n')).toMatch(/tls = false while bound to 0\.0\.0\.0: tokens cross the network in the clear/);
      expect(d.stderr()).toMatch(/tls = false while bound to 0\.0\.0\.0/);
    },
    `bindAddress = "0.0.0.0:0"\ntls = false\n${AGENT}`,
  );
});

describe('tether serve refusing to start', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;

  beforeEach(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, AGENT);
  });
  afterEach(async () => {
    await tmux.cleanup();
    home.cleanup();
  });

  it('refuses tmux older than 3.0 with the message, exit non-zero', async () => {
    const bin = join(home.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'tmux'), '#!/bin/sh\necho "tmux 2.9a"\n');
    chmodSync(join(bin, 'tmux'), 0o755);
    const r = await runCli(['serve'], { ...home.env, PATH: `${bin}:${process.env.PATH ?? ''}` });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('tmux 3.0 or newer is required (send-keys -H, new-window -e), found 2.9a');
    expect(r.stdout).toBe('');
  });

  it('refuses a port in use, naming the port and bindAddress, and creates no session', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      writeFileSync(
        home.configFile,
        `bindAddress = "127.0.0.1:${port}"\ntls = false\n${AGENT}\n[tmux]\nsocket = ${JSON.stringify(tmux.socket)}\n`,
      );
      // No default session yet: a start that creates it before binding would leave one behind.
      await tmux.tmux('kill-session', '-t', '=pi-main').catch(() => undefined);
      const r = await runCli(['serve'], home.env);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(String(port));
      expect(r.stderr).toContain('bindAddress');
      expect(r.stdout).toBe('');
      // The default session did not exist before the refused start, and does not after it.
      const after = await tmux.tmux('list-sessions', '-F', '#{session_name}').catch(() => '');
      expect(after.split('\n')).not.toContain('pi-main');
    } finally {
      blocker.close();
    }
  });

  it('refuses a bad config value, naming the key and the file', async () => {
    writeFileSync(home.configFile, `bindAddress = "127.0.0.1:0"\n[stream]\nring_kb = "lots"\n`);
    const r = await runCli(['serve'], home.env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('stream.ring_kb');
    expect(r.stderr).toContain(home.configFile);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each(['fast', '5', '1.5', '600001'])(
    'refuses a bad TETHER_TEST_RESTORE_RETRY_MS (%s), naming it, and creates no session',
    async (value) => {
      await tmux.tmux('kill-session', '-t', '=pi-main').catch(() => undefined);
      const r = await runCli(['serve'], { ...home.env, TETHER_TEST_RESTORE_RETRY_MS: value });
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim()).toBe(`tether: TETHER_TEST_RESTORE_RETRY_MS: must be a whole number of ms from 10 to 600000, got "${value}"`);
      expect(r.stdout).toBe('');
      expect((await tmux.tmux('list-sessions', '-F', '#{session_name}').catch(() => '')).split('\n')).not.toContain('pi-main');
    },
  );

  it('binds to loopback by default', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const { resolvePaths } = await import('../../src/config/paths.js');
    writeFileSync(home.configFile, '');
    expect((await loadConfig(resolvePaths(home.env), home.env)).config.bindAddress).toBe('127.0.0.1:7777');
  });
});

describe('a second tether serve on the same data dir', () => {
  const fx = useDaemon(AGENT);

  /** Every file under `dir` with its bytes and mtime (ns), by name. */
  function filesOf(dir: string): Record<string, { bytes: string; mtime: bigint }> {
    const out: Record<string, { bytes: string; mtime: bigint }> = {};
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      out[name] = { bytes: readFileSync(path).toString('base64'), mtime: statSync(path, { bigint: true }).mtimeNs };
    }
    return out;
  }

  /** What a second daemon must not change: buffers, records, tmux's sessions, options, clients. */
  async function state() {
    return {
      buffers: filesOf(join(fx.home.dataDir, 'buffers')),
      records: filesOf(join(fx.home.dataDir, 'sessions')),
      sessions: await fx.tmux.tmux('list-sessions', '-F', '#{session_name} #{session_activity} #{window_activity}'),
      options: await fx.tmux.tmux('show-options', '-t', 'pi-main'),
      windowOptions: await fx.tmux.tmux('show-options', '-w', '-t', 'pi-main:'),
      clients: await fx.tmux.tmux('list-clients', '-F', '#{client_pid} #{client_control_mode}'),
    };
  }

  it('is refused before it adopts a session: buffers, records, tmux and its clients are untouched', async () => {
    const attaches = join(fx.home.dir, 'attaches');
    writeFileSync(attaches, '');
    // The first daemon's own control client attaches a moment after the daemon answers: it must
    // be there before the hook, or its attach is counted as the second daemon's.
    await eventually(
      async () => (await fx.tmux.tmux('list-clients', '-t', 'pi-main', '-F', '#{client_control_mode}')).split('\n').includes('1'),
      15_000,
      50,
      "the first daemon's control client attached to pi-main",
    );
    // Every client that attaches to the session, even for a moment, leaves a line.
    await fx.tmux.tmux('set-hook', '-t', 'pi-main', 'client-attached', `run-shell 'echo attached >> ${attaches}'`);
    expect((await fx.json('POST', '/sessions/pi-main/input', { type: 'keys', data: 'second-daemon-marker\r' })).status).toBe(204);
    const bufferFile = join(fx.home.dataDir, 'buffers', 'pi-main.log');
    await eventually(
      () => statSync(bufferFile, { throwIfNoEntry: false }) && readFileSync(bufferFile, 'latin1').split('second-daemon-marker').length >= 3,
      15_000,
      50,
      'the echo and cat output in the buffer file',
    );
    await eventually(
      () => statSync(join(fx.home.dataDir, 'sessions', 'pi-main.json'), { throwIfNoEntry: false }),
      15_000,
      50,
      'the record',
    );
    const before = await state();

    const second = await runCli(['serve'], fx.home.env);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain('another tether daemon');
    expect(second.stdout).toBe('');

    expect(await state()).toEqual(before);
    expect(readFileSync(attaches, 'utf8')).toBe('');
    // The first daemon still serves the session.
    expect((await fx.json('POST', '/sessions/pi-main/input', { type: 'keys', data: 'still-served\r' })).status).toBe(204);
    await eventually(() => readFileSync(bufferFile, 'latin1').includes('still-served'), 15_000, 50, 'the first daemon buffering on');
  });
});

describe('lastOutputAt across a restart', () => {
  const fx = useDaemon(AGENT);

  const lastOutputAt = async (): Promise<string | null> => {
    const list = (await (await fx.d.get('/sessions')).json()) as { id: string; lastOutputAt: string | null }[];
    return list.find((s) => s.id === 'pi-main')?.lastOutputAt ?? null;
  };

  it('is what tmux knows of the pane after the daemon restarts, not null until new output', async () => {
    expect((await fx.json('POST', '/sessions/pi-main/input', { type: 'keys', data: 'some-output\r' })).status).toBe(204);
    const before = (await eventually(lastOutputAt, 15_000, 50, 'a lastOutputAt after output'))!;
    // Quiet: the same value a little later (the echo and cat's copy are in).
    const settled = await eventually(
      async () => {
        const a = await lastOutputAt();
        await new Promise((r) => setTimeout(r, 300));
        return a !== null && a === (await lastOutputAt()) ? a : null;
      },
      15_000,
      0,
      'lastOutputAt to settle',
    );
    if (settled === null) throw new Error('lastOutputAt did not settle');
    expect(settled >= before).toBe(true);
    // A restart a second or more later, so "now" would show.
    await eventually(() => Date.now() > Date.parse(settled) + 1500, 5_000, 50, 'a second and a half to pass');
    await fx.d.kill();
    await fx.startAgain();
    const after = await lastOutputAt();
    expect(after).not.toBeNull();
    // tmux keeps whole seconds of the moment it read the output; the daemon noted the moment the
    // output reached it, a little later (4 ms past the second on a busy host): so not later than
    // the daemon's, and within a second plus that way from tmux to the daemon. "Now" would be
    // 1.5 s or more later than the daemon's, null the value of a daemon that forgot.
    const TMUX_TO_DAEMON_MS = 250;
    const diff = Date.parse(settled) - Date.parse(after!);
    expect(diff).toBeGreaterThanOrEqual(0);
    expect(diff).toBeLessThan(1000 + TMUX_TO_DAEMON_MS);
  });
});
