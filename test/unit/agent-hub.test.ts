/**
 * The daemon's agent side over its real Unix socket and a private tmux server: who may
 * connect (mode 0600), how an agent is placed in its session (and the session adopted), what
 * is refused and said, and what the hub then reports.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentHub } from '../../src/agent/hub/hub.js';
import { PaneLocator } from '../../src/agent/hub/pane-locator.js';
import { AGENT_PROTOCOL_VERSION, type AgentMessage, type DaemonMessage } from '../../src/agent/wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../../src/agent/wire/json-lines.js';
import { AgentSocketServer } from '../../src/agent/hub/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { readUserOption } from '../../src/tmux/sessions/sessions.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** Sends lines on a fresh connection; resolves with what the daemon answered once it closed or answered. */
async function talk(path: string, lines: string[], until: (got: DaemonMessage[]) => boolean = (g) => g.length > 0) {
  const socket = createConnection(path);
  const got: DaemonMessage[] = [];
  let closed = false;
  const reader = new JsonLineReader();
  socket.on('data', (d: Buffer) => got.push(...reader.push(d).map((l) => JSON.parse(l) as DaemonMessage)));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  for (const l of lines) socket.write(l.endsWith('\n') ? l : `${l}\n`);
  await eventually(() => until(got) || closed, 15_000, 10);
  return { got, closed: () => closed, socket };
}

describe('agent socket and hub', () => {
  let tmux: PrivateTmux;
  let dir: string;
  let hub: AgentHub;
  let server: AgentSocketServer;
  const registered: string[] = [];
  const named: [string, number][] = [];
  const hello = (pane: string, socket = ''): AgentMessage => ({
    type: 'hello',
    v: AGENT_PROTOCOL_VERSION,
    pane,
    tmuxSocket: socket || tmux.socket,
    pid: 7,
    state: 'idle',
    userMessages: ['first'],
    userMessageCount: 1,
  });
  const paneOf = async (s: string) => (await tmux.tmux('display-message', '-p', '-t', `=${s}:`, '#{pane_id}')).trim();

  beforeAll(async () => {
    tmux = await privateTmux();
    dir = mkdtempSync(join(tmpdir(), 'tether-hub-'));
    const locator = new PaneLocator(tmux.cli, Date.now);
    hub = new AgentHub({
      now: Date.now,
      log: silentLogger,
      locate: (pane, socket) => locator.locate(pane, socket),
      url: () => 'http://127.0.0.1:7777/?token=t',
      registered: (s) => registered.push(s),
      userMessages: (s, _first, count) => named.push([s, count]),
    });
    server = await AgentSocketServer.listen(join(dir, 'run', 'agent.sock'), hub, silentLogger);
  });
  afterAll(async () => {
    await server.close();
    hub.stop();
    await tmux.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('only the user can open the socket', () => {
    expect(statSync(server.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'run')).mode & 0o777).toBe(0o700);
  });

  it('places an agent in the session of its pane, adopts that session and welcomes it with the URL', async () => {
    await tmux.tmux('new-session', '-d', '-s', 'mine', '--', 'cat');
    const pane = await paneOf('mine');
    const c = await talk(server.path, [encodeLine(hello(pane))]);
    expect(c.got).toEqual([{ type: 'welcome', session: 'mine', url: 'http://127.0.0.1:7777/?token=t' }]);
    expect(await readUserOption(tmux.cli, 'mine', '@created')).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await readUserOption(tmux.cli, 'mine', '@tether-pane')).toBe(pane);
    expect(registered).toContain('mine');
    expect(hub.current('mine')?.value).toBe('idle');
    expect(named).toContainEqual(['mine', 1]);

    const seen: string[] = [];
    const stop = hub.subscribe('mine', (s) => seen.push(s.tool ? `${s.value}:${s.tool}` : s.value));
    for (const m of [
      { type: 'event', event: 'agent.start' },
      { type: 'event', event: 'tool.start', id: 'c1', tool: 'bash' },
      { type: 'event', event: 'tool.end', id: 'c1' },
      { type: 'event', event: 'agent.end', idle: true },
      { type: 'commands', commands: [{ name: 'review', description: 'Review', source: 'prompt' }] },
      { type: 'user-message', text: 'second' },
    ] as AgentMessage[])
      c.socket.write(encodeLine(m));
    await eventually(() => seen.length === 4);
    expect(seen).toEqual(['thinking', 'tool:bash', 'thinking', 'awaiting-input']);
    await eventually(() => hub.commands('mine')?.[0]?.name === 'review');
    expect(named).toContainEqual(['mine', 2]);

    c.socket.destroy();
    await eventually(() => hub.current('mine') === null);
    expect(hub.commands('mine')).toBeNull();
    expect(seen).toHaveLength(4);
    stop();
  });

  it('refuses, with a sentence, an agent on another tmux server, an unknown pane and a session name tether cannot use', async () => {
    await tmux.tmux('new-session', '-d', '-s', 'other', '--', 'cat');
    const pane = await paneOf('other');
    const wrong = await talk(server.path, [encodeLine(hello(pane, '/tmp/some-other/tmux.sock'))]);
    expect(wrong.got[0]).toMatchObject({
      type: 'refused',
      message: expect.stringMatching(/tmux server at \/tmp\/some-other\/tmux.sock.*\[tmux\] socket/) as unknown,
    });
    const unknown = await talk(server.path, [encodeLine(hello('%9999'))]);
    expect(unknown.got[0]).toMatchObject({
      type: 'refused',
      message: expect.stringMatching(/pane %9999 is not on the tmux server/) as unknown,
    });
    await tmux.tmux('new-session', '-d', '-s', 'has space', '--', 'cat');
    const spaced = await talk(server.path, [encodeLine(hello(await paneOf('has space')))]);
    expect(spaced.got[0]).toMatchObject({ type: 'refused', message: expect.stringMatching(/rename-session/) as unknown });
    expect(await readUserOption(tmux.cli, 'other', '@created')).toBeNull();
    await eventually(() => wrong.closed() && unknown.closed() && spaced.closed());
  });

  it('a bad line is refused and its connection closed; nothing it sent counts', async () => {
    await tmux.tmux('new-session', '-d', '-s', 'bad', '--', 'cat');
    const pane = await paneOf('bad');
    const c = await talk(server.path, [encodeLine(hello(pane)), '{"type":"event","event":"agent.start"}', 'garbage'], (g) => g.length >= 2);
    await eventually(() => c.closed());
    expect(c.got.map((m) => m.type)).toContain('refused');
    expect(hub.current('bad')).toBeNull();
  });

  it('takes over a stale socket file, and refuses one another daemon answers on', async () => {
    const stalePath = join(dir, 'stale', 'agent.sock');
    const first = await AgentSocketServer.listen(stalePath, hub, silentLogger);
    await expect(AgentSocketServer.listen(stalePath, hub, silentLogger)).rejects.toMatchObject({
      name: 'DomainError',
      code: 'agent-socket-unusable',
    });
    await first.close();
    writeFileSync(stalePath, '');
    const second = await AgentSocketServer.listen(stalePath, hub, silentLogger);
    await second.close();
    await expect(AgentSocketServer.listen(join(dir, 'x'.repeat(120)), hub, silentLogger)).rejects.toThrow(/longer than 103 bytes/);
  });
});

describe("an agent's reported working directory", () => {
  it('is kept only when it is an absolute path with no control character, whichever agent reports it', () => {
    const h = new AgentHub({
      now: () => 1_795_800_000_000,
      log: silentLogger,
      locate: () => Promise.resolve({ refused: 'none' }),
      url: () => '',
    });
    for (const agent of ['claude', 'codex', 'gemini', 'opencode']) {
      const session = `s-${agent}`;
      h.report(session, agent, { events: [{ type: 'event', event: 'agent.start' }], cwd: '/work/app' });
      expect(h.agentCwd(session)).toBe('/work/app');
      for (const bad of ['relative/dir', '../up', '/work\u0000/x', '/work\n/x', '\u001b[2J/x', ''])
        h.report(session, agent, { events: [], cwd: bad });
      expect(h.agentCwd(session), agent).toBe('/work/app');
      h.report(session, agent, { events: [], cwd: '/work/other' });
      expect(h.agentCwd(session)).toBe('/work/other');
    }
    h.stop();
  });
});

describe('stops in the hub', () => {
  const hub = () =>
    new AgentHub({ now: () => 1_795_800_000_000, log: silentLogger, locate: () => Promise.resolve({ refused: 'none' }), url: () => '' });

  it("a report the exited agent's machine does not take leaves the exited stop as it was", () => {
    const h = hub();
    h.report('s', 'claude', { events: [{ type: 'event', event: 'agent.start' }] });
    h.exited('s', { status: null, signal: 9 });
    const exited = h.stopOf('s');
    expect(exited).toMatchObject({ kind: 'exited', agent: 'claude', signal: 'SIGKILL' });
    h.report('s', 'claude', { events: [{ type: 'event', event: 'agent.end', idle: true }] });
    expect(h.stopOf('s')).toEqual(exited);
    expect(h.current('s')).toBeNull();
    h.stop();
  });

  it('a second report of the same stop keeps its id; a new turn ends it', () => {
    const h = hub();
    const seen: (string | undefined)[] = [];
    h.subscribe('s', (f) => seen.push(f.stop?.id));
    h.report('s', 'codex', { events: [{ type: 'event', event: 'agent.start' }] });
    const limit = { kind: 'usage-limit' as const, message: 'x'.repeat(400), resetsAt: 1_795_810_000_000, limit: 'five_hour' };
    h.report('s', 'codex', { events: [], stop: limit });
    const first = h.stopOf('s')!;
    expect(first.message).toHaveLength(300);
    expect(first.message.endsWith('…')).toBe(true);
    expect(first.resetsAt).toBe(new Date(1_795_810_000_000).toISOString());
    h.report('s', 'codex', { events: [], stop: limit });
    expect(h.stopOf('s')?.id).toBe(first.id);
    expect(seen.filter((id) => id === first.id)).toHaveLength(1);
    h.report('s', 'codex', { events: [{ type: 'event', event: 'agent.start' }] });
    expect(h.stopOf('s')).toBeNull();
    expect(h.current('s')).toMatchObject({ value: 'thinking' });
    expect(h.current('s')?.stop).toBeUndefined();
    h.stop();
  });
});
