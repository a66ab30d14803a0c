/**
 * The extension's behaviour inside pi, with pi's extension API played by a small fake (pi's
 * own process is exercised end to end in test/e2e/agent.test.ts): the real daemon side on a
 * real Unix socket and a private tmux server receive what it reports.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentHub } from '../../src/agent/hub/hub.js';
import { PaneLocator } from '../../src/agent/hub/pane-locator.js';
import { AGENT_SOCKET_ENV } from '../../src/agent/wire/extension-channel.js';
import { AgentSocketServer } from '../../src/agent/hub/socket-server.js';
import tetherExtension from '../../src/extension/index.js';
import type { PiApi, PiContext, PiEvent } from '../../src/extension/pi-api.js';
import { packageVersion } from '../../src/config/version.js';
import { silentLogger } from '../../src/log.js';
import { eventually } from '../helpers/tmux.js';
import { usePaneOnPrivateTmux } from '../helpers/tmux-fixture.js';

/** pi as the extension sees it: handlers by event, a flag, a command list, a context. */
function fakePi(flag: boolean | undefined) {
  const handlers = new Map<string, ((e: PiEvent, ctx: PiContext) => unknown)[]>();
  const notices: string[] = [];
  let idle = true;
  const ctx: PiContext = {
    hasUI: true,
    cwd: tmpdir(),
    ui: { notify: (m) => notices.push(m) },
    isIdle: () => idle,
    hasPendingMessages: () => false,
  };
  const api: PiApi = {
    on: (name, h) => handlers.set(name, [...(handlers.get(name) ?? []), h]),
    registerFlag: () => undefined,
    getFlag: () => flag,
    getCommands: () => [
      { name: 'review', description: 'Review the diff', source: 'prompt' },
      { name: 'deploy', description: 'Deploy it', source: 'extension', args: { target: { type: 'string' } } },
      { name: 'not one word', source: 'extension' },
      { name: 'huge', description: 'An argument schema past the limit', source: 'extension', args: 'x'.repeat(5000) },
    ],
  };
  const emit = (name: string, e: PiEvent = {}) => {
    for (const h of handlers.get(name) ?? []) h({ type: name, ...e }, ctx);
  };
  return { api, emit, notices, setIdle: (v: boolean) => (idle = v) };
}

describe('the tether extension', () => {
  // The agent sockets live beside the tmux socket, in the server's temp dir.
  const ext = usePaneOnPrivateTmux('ext');
  const { tmux } = ext;
  // Restored in place: files share a worker process, and a plain object in place of
  // process.env would hide every later change from the real environment (worker threads read it).
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  /** The daemon side; `version` null plays a daemon from before welcomes carried one. */
  async function daemonSide(path: string, version: string | null = packageVersion()) {
    const hub = new AgentHub({
      now: Date.now,
      log: silentLogger,
      locate: (p, s) => new PaneLocator(tmux.cli, Date.now).locate(p, s),
      url: () => 'http://127.0.0.1:9/?token=t',
      ...(version !== null ? { version } : {}),
    });
    const server = await AgentSocketServer.listen(path, hub, silentLogger);
    return { hub, server, stop: async () => (await server.close(), hub.stop()) };
  }

  function inTmux(socketPath: string): void {
    process.env.TMUX = `${tmux.socket},1,0`;
    process.env.TMUX_PANE = ext.pane;
    process.env[AGENT_SOCKET_ENV] = socketPath;
  }

  /** pi with the extension loaded (with `--tether` when `tether`), its session started. */
  function startedPi(tether: boolean) {
    const pi = fakePi(tether);
    tetherExtension(pi.api);
    pi.emit('session_start', { reason: 'startup' });
    return pi;
  }

  /** A daemon side on socket `name`, and pi started in the tmux pane with the socket's address. */
  async function piWithDaemon(name: string, tether = true, version: string | null = packageVersion()) {
    const path = join(tmux.dir, name);
    const d = await daemonSide(path, version);
    inTmux(path);
    return { path, d, pi: startedPi(tether) };
  }

  it('does nothing without --tether', async () => {
    const { d, pi } = await piWithDaemon('a.sock', false);
    pi.emit('agent_start');
    await new Promise((r) => setTimeout(r, 200));
    expect(d.hub.connected('ext')).toBe(false);
    await d.stop();
  });

  it('says it needs tmux outside tmux', () => {
    delete process.env.TMUX;
    delete process.env.TMUX_PANE;
    const pi = startedPi(true);
    expect(pi.notices.join('\n')).toMatch(/tether needs tmux.*tether attach/);
  });

  it('reports states, commands and user messages; awaiting-input only once pi is idle', async () => {
    const { d, pi } = await piWithDaemon('b.sock');
    await eventually(() => d.hub.current('ext')?.value === 'idle');
    const seen: string[] = [];
    d.hub.subscribe('ext', (s) => seen.push(s.tool ? `${s.value}:${s.tool}` : s.value));
    pi.emit('agent_start');
    pi.emit('message_end', { message: { role: 'user', content: [{ type: 'text', text: 'run the tests' }] } });
    pi.emit('tool_execution_start', { toolCallId: 't1', toolName: 'bash' });
    pi.emit('tool_execution_end', { toolCallId: 't1', toolName: 'bash' });
    pi.setIdle(false);
    pi.emit('agent_end', { messages: [{ role: 'assistant', stopReason: 'stop' }] });
    await eventually(() => seen.length === 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toEqual(['thinking', 'tool:bash', 'thinking']);
    pi.setIdle(true);
    await eventually(() => seen.length === 4);
    expect(seen[3]).toBe('awaiting-input');
    // The daemon runs this version: its welcome (long since received) brought no restart notice.
    expect(pi.notices.filter((n) => n.includes('restart'))).toEqual([]);
    expect(d.hub.commands('ext')?.map((c) => c.name)).toEqual(['review', 'deploy', 'huge']);
    // An argument schema reaches the daemon; one past the limit is left out, not the command.
    expect(d.hub.commands('ext')?.map((c) => c.args)).toEqual([undefined, { target: { type: 'string' } }, undefined]);
    pi.emit('session_shutdown', { reason: 'quit' });
    await eventually(() => d.hub.current('ext') === null);
    await d.stop();
  });

  it('points out a daemon of another version once, with the fix', async () => {
    const mine = packageVersion();
    for (const [name, version, says] of [
      [
        'old.sock',
        '0.0.9-old',
        `tether: the running daemon is tether 0.0.9-old, this pi extension is tether ${mine}: run "tether restart" to serve with ${mine}`,
      ],
      [
        'older.sock',
        null,
        `tether: the running daemon is an older tether, this pi extension is tether ${mine}: run "tether restart" to serve with ${mine}`,
      ],
    ] as const) {
      const { d, pi } = await piWithDaemon(name, true, version);
      await eventually(() => d.hub.connected('ext'));
      await eventually(() => pi.notices.includes(says), 5000, 25, 'the version notice');
      expect(pi.notices.filter((n) => n.includes('restart'))).toEqual([says]);
      pi.emit('session_shutdown', { reason: 'quit' });
      await d.stop();
    }
  });

  it('lives through the daemon going away, and tells the new one where it is', async () => {
    const started = await piWithDaemon('c.sock');
    const { path, pi } = started;
    let d = started.d;
    await eventually(() => d.hub.connected('ext'));
    await d.stop();
    pi.emit('agent_start');
    pi.emit('tool_execution_start', { toolCallId: 't1', toolName: 'read' });
    d = await daemonSide(path);
    await eventually(() => d.hub.current('ext')?.value === 'tool', 15_000);
    expect(d.hub.current('ext')?.tool).toBe('read');
    expect(d.hub.commands('ext')?.map((c) => c.name)).toEqual(['review', 'deploy', 'huge']);
    pi.emit('session_shutdown', { reason: 'quit' });
    await d.stop();
  });
});
