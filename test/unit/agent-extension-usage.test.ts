/**
 * The extension's usage windows (docs/agents.md "Usage"): pi's `after_provider_response` hands
 * it each model API answer's headers, and the windows in them go to the daemon as one `usage`
 * message. pi is a small fake of its extension API; the daemon is a stand-in on a real Unix
 * socket that reads every line with the daemon's own decoder and answers the hello.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_SOCKET_ENV, decodeAgentMessage, type AgentMessage } from '../../src/agent/wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../../src/agent/wire/json-lines.js';
import { packageVersion } from '../../src/config/version.js';
import tetherExtension from '../../src/extension/index.js';
import type { PiApi, PiContext, PiEvent } from '../../src/extension/pi-api.js';
import { eventually } from '../helpers/tmux.js';

/** pi as the extension sees it: handlers by event, the flag, a context. */
function fakePi(flag: boolean) {
  const handlers = new Map<string, ((e: PiEvent, ctx: PiContext) => unknown)[]>();
  const notices: string[] = [];
  const ctx: PiContext = {
    hasUI: true,
    cwd: tmpdir(),
    ui: { notify: (m) => notices.push(m) },
    isIdle: () => true,
    hasPendingMessages: () => false,
  };
  const api: PiApi = {
    on: (name, h) => handlers.set(name, [...(handlers.get(name) ?? []), h]),
    registerFlag: () => undefined,
    getFlag: () => flag,
    getCommands: () => [],
  };
  const emit = (name: string, e: Record<string, unknown> = {}) => {
    for (const h of handlers.get(name) ?? []) h({ type: name, ...e }, ctx);
  };
  return { emit, notices, api };
}

/** The daemon's stand-in: every line it was sent, as the daemon decodes it (a line it cannot read fails the test). */
interface StandIn {
  readonly messages: AgentMessage[];
  readonly lines: string[];
  readonly badLines: string[];
  readonly connections: () => number;
  close(): Promise<void>;
}

async function standIn(path: string): Promise<StandIn> {
  const messages: AgentMessage[] = [];
  const lines: string[] = [];
  const badLines: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new JsonLineReader();
    socket.on('data', (data: Buffer) => {
      for (const line of reader.push(data)) {
        lines.push(line);
        try {
          const m = decodeAgentMessage(line);
          messages.push(m);
          if (m.type === 'hello')
            socket.write(encodeLine({ type: 'welcome', session: 'work', url: 'http://127.0.0.1:9/?token=t', version: packageVersion() }));
        } catch (err) {
          badLines.push(`${line}: ${String(err)}`);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    messages,
    lines,
    badLines,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The Codex headers of an answer at 57 % of the 5-hour window and 23 % of the weekly one. */
const CODEX = {
  'x-codex-primary-used-percent': '57',
  'x-codex-primary-window-minutes': '300',
  'x-codex-primary-reset-at': '1796428554',
  'x-codex-secondary-used-percent': '23',
  'x-codex-secondary-window-minutes': '10080',
  'x-codex-secondary-reset-at': '1796856954',
};
/** What every answer carries besides: none of it is a usage window. */
const OTHER = {
  'content-type': 'text/event-stream',
  'x-ratelimit-remaining-requests': '9',
  'ratelimit-remaining': '9',
  'retry-after': '30',
  'x-quota-remaining': '0.09',
};

describe("the tether extension's usage windows", () => {
  let dir: string;
  let daemon: StandIn;
  const saved = { ...process.env };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tether-ext-usage-'));
    daemon = await standIn(join(dir, 'agent.sock'));
    // pi in a tmux pane, started by tether (the socket's address given): no daemon is started from here.
    process.env.TMUX = `${join(dir, 'tmux.sock')},1,0`;
    process.env.TMUX_PANE = '%1';
    process.env[AGENT_SOCKET_ENV] = join(dir, 'agent.sock');
  });
  afterEach(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await daemon.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** pi with the extension (and `--tether` when `tether`), its session started. */
  function startedPi(tether = true) {
    const pi = fakePi(tether);
    tetherExtension(pi.api);
    pi.emit('session_start', { reason: 'startup' });
    return pi;
  }
  const usages = () => daemon.messages.filter((m) => m.type === 'usage');
  /** Waits until the daemon has `text` as a user message: every line the extension sent before it has arrived. */
  const marker = async (pi: ReturnType<typeof fakePi>, text: string) => {
    pi.emit('message_end', { message: { role: 'user', content: text } });
    await eventually(() => daemon.messages.some((m) => m.type === 'user-message' && m.text === text), 5000, 10, `the marker ${text}`);
  };
  const welcomed = async () => eventually(() => daemon.messages.some((m) => m.type === 'hello'), 5000, 10, 'the hello');

  it("an answer carrying Codex's windows: one usage message with both, percents as sent, resets in ms", async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('after_provider_response', { status: 200, headers: { ...OTHER, ...CODEX } });
    await marker(pi, 'after the answer');
    expect(usages()).toEqual([
      {
        type: 'usage',
        windows: [
          { name: 'five_hour', usedPercent: 57, resetsAt: 1796428554_000 },
          { name: 'seven_day', usedPercent: 23, resetsAt: 1796856954_000 },
        ],
      },
    ]);
    expect(daemon.badLines).toEqual([]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it("an answer carrying Anthropic's windows: utilization as a percent", async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('after_provider_response', {
      status: 200,
      headers: {
        'anthropic-ratelimit-unified-5h-utilization': '0.42',
        'anthropic-ratelimit-unified-5h-reset': '1796429255',
        'anthropic-ratelimit-unified-7d-utilization': '0.17',
        'anthropic-ratelimit-unified-7d-reset': '1796857655',
      },
    });
    await marker(pi, 'after the answer');
    expect(usages()).toEqual([
      {
        type: 'usage',
        windows: [
          { name: 'five_hour', usedPercent: 42, resetsAt: 1796429255_000 },
          { name: 'seven_day', usedPercent: 17, resetsAt: 1796857655_000 },
        ],
      },
    ]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it('one message an answer: a turn of two answers sends two, a 429 with the headers one too', async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('after_provider_response', { status: 200, headers: CODEX });
    pi.emit('after_provider_response', { status: 200, headers: { ...CODEX, 'x-codex-primary-used-percent': '58' } });
    pi.emit('after_provider_response', { status: 429, headers: { ...CODEX, 'x-codex-primary-used-percent': '100' } });
    await marker(pi, 'after the answers');
    expect(usages().map((m) => (m.type === 'usage' ? m.windows[0]!.usedPercent : null))).toEqual([57, 58, 100]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it('an answer without the windows sends nothing; nor one without headers or with headers that are not an object', async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('after_provider_response', { status: 200, headers: OTHER });
    pi.emit('after_provider_response', { status: 200, headers: {} });
    pi.emit('after_provider_response', { status: 200 });
    pi.emit('after_provider_response', { status: 200, headers: 'x-codex-primary-used-percent: 57' });
    pi.emit('after_provider_response', { status: 200, headers: [['x-codex-primary-used-percent', '57']] });
    pi.emit('after_provider_response', { status: 200, headers: { 'x-codex-primary-used-percent': 57 } });
    await marker(pi, 'after the answers');
    expect(usages()).toEqual([]);
    expect(daemon.badLines).toEqual([]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it('bad figures: a percent that is not a number crosses as null, a reset that is not a time as null, a name the daemon would refuse is left out; the link stays', async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('after_provider_response', {
      status: 200,
      headers: {
        // Header names as some provider might hand them: pi lowercases them, the extension does too.
        'X-Codex-Primary-Used-Percent': 'abc',
        'x-codex-primary-window-minutes': '300',
        'x-codex-primary-reset-at': 'soon',
        'x-codex-secondary-used-percent': '23',
        'x-codex-secondary-window-minutes': '1e30',
        'x-codex-secondary-reset-at': '1796856954',
      },
    });
    // Only the unreadable name: the message would be empty, so none is sent.
    pi.emit('after_provider_response', {
      status: 200,
      headers: { 'x-codex-primary-used-percent': '5', 'x-codex-primary-window-minutes': '1e30' },
    });
    await marker(pi, 'after the answers');
    expect(daemon.badLines).toEqual([]);
    expect(usages()).toEqual([{ type: 'usage', windows: [{ name: 'five_hour', usedPercent: Number.NaN, resetsAt: null }] }]);
    // On the wire the percent was null (the daemon reads it back as NaN, above); one connection all along.
    expect(daemon.lines.filter((l) => l.includes('"usage"'))).toEqual([
      '{"type":"usage","windows":[{"name":"five_hour","usedPercent":null,"resetsAt":null}]}',
    ]);
    expect(daemon.connections()).toBe(1);
    expect(pi.notices.filter((n) => n.includes('could not read'))).toEqual([]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it('nothing reaches pi from the handler, whatever the event holds', async () => {
    const pi = startedPi();
    await welcomed();
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    expect(() => pi.emit('after_provider_response', { status: 200, headers: hostile })).not.toThrow();
    expect(() => pi.emit('after_provider_response', { status: 200, headers: null })).not.toThrow();
    await marker(pi, 'still reporting');
    expect(usages()).toEqual([]);
    pi.emit('session_shutdown', { reason: 'quit' });
  });

  it('without --tether: no connection, nothing sent', async () => {
    const pi = startedPi(false);
    pi.emit('after_provider_response', { status: 200, headers: CODEX });
    await new Promise((r) => setTimeout(r, 200));
    expect(daemon.connections()).toBe(0);
    expect(daemon.messages).toEqual([]);
  });

  it('after session_shutdown: nothing sent', async () => {
    const pi = startedPi();
    await welcomed();
    pi.emit('session_shutdown', { reason: 'quit' });
    pi.emit('after_provider_response', { status: 200, headers: CODEX });
    await new Promise((r) => setTimeout(r, 200));
    expect(usages()).toEqual([]);
  });
});
