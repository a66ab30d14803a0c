/**
 * The agent channel's wire protocol: what decodes, what is refused (with the field named), the
 * limits, and the line reader at every split point.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import {
  AGENT_PROTOCOL_VERSION,
  MAX_AGENT_COMMANDS,
  MAX_COMMAND_ARGS_CHARS,
  MAX_USER_MESSAGE_CHARS,
  decodeAgentMessage,
  decodeDaemonMessage,
  type AgentMessage,
} from '../../src/agent/wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../../src/agent/wire/json-lines.js';
import { agentSocketPath } from '../../src/agent/wire/socket-path.js';

const hello = {
  type: 'hello',
  v: AGENT_PROTOCOL_VERSION,
  pane: '%3',
  tmuxSocket: '/tmp/tmux-1/default',
  pid: 42,
  state: 'idle',
  userMessages: [],
  userMessageCount: 0,
};
const refusal = (line: string) => {
  try {
    decodeAgentMessage(line);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('agent-bad-message');
    return (err as DomainError).message;
  }
  throw new Error(`accepted: ${line}`);
};

describe('agent protocol', () => {
  it('round-trips every message kind', () => {
    const messages: AgentMessage[] = [
      hello as AgentMessage,
      { ...(hello as AgentMessage & { type: 'hello' }), state: 'tool', tool: 'bash', userMessages: ['a', 'b'], userMessageCount: 5 },
      { type: 'event', event: 'agent.start' },
      { type: 'event', event: 'tool.start', id: 'c1', tool: 'bash' },
      { type: 'event', event: 'tool.end', id: 'c1' },
      { type: 'event', event: 'agent.end', idle: true },
      { type: 'commands', commands: [{ name: 'review', description: 'Review code', source: 'prompt' }] },
      {
        type: 'commands',
        commands: [{ name: 'deploy', description: 'Deploy', source: 'extension', args: { target: { type: 'string', enum: ['staging'] } } }],
      },
      { type: 'user-message', text: 'fix the tests' },
      { ...(hello as AgentMessage & { type: 'hello' }), sessionFile: '/home/me/.pi/agent/sessions/a b/2026.jsonl' },
      { type: 'session-file', path: '/home/me/.pi/agent/sessions/x/2026-11-25.jsonl' },
    ];
    for (const m of messages) expect(decodeAgentMessage(encodeLine(m).trimEnd())).toEqual(m);
    expect(decodeDaemonMessage(encodeLine({ type: 'welcome', session: 'pi-main', url: 'http://h:1/?token=t' }))).toEqual({
      type: 'welcome',
      session: 'pi-main',
      url: 'http://h:1/?token=t',
    });
  });

  it('refuses bad messages and names the field', () => {
    expect(refusal('not json')).toMatch(/not JSON/);
    expect(refusal('[]')).toMatch(/object/);
    expect(refusal('{"type":"nope"}')).toMatch(/type/);
    expect(refusal(JSON.stringify({ ...hello, v: 99 }))).toMatch(/^v:/);
    expect(refusal(JSON.stringify({ ...hello, pane: 'x; kill-server' }))).toMatch(/^pane:/);
    expect(refusal(JSON.stringify({ ...hello, state: 'sleeping' }))).toMatch(/^state:/);
    expect(refusal(JSON.stringify({ ...hello, pid: -1 }))).toMatch(/^pid:/);
    expect(refusal(JSON.stringify({ ...hello, userMessages: ['a', 'b', 'c', 'd'] }))).toMatch(/^userMessages:/);
    expect(refusal('{"type":"event","event":"agent.explode"}')).toMatch(/^event:/);
    expect(refusal('{"type":"event","event":"tool.start","id":"x"}')).toMatch(/needs id and tool/);
    expect(refusal('{"type":"event","event":"agent.end"}')).toMatch(/idle/);
    expect(refusal('{"type":"commands","commands":[{"name":"two words"}]}')).toMatch(/commands\/0\/name/);
    const huge = { name: 'x', args: { text: 'a'.repeat(MAX_COMMAND_ARGS_CHARS) } };
    expect(refusal(JSON.stringify({ type: 'commands', commands: [huge] }))).toMatch(/^commands\/0\/args: larger than/);
    const many = Array.from({ length: MAX_AGENT_COMMANDS + 1 }, (_, i) => ({ name: `c${i}` }));
    expect(refusal(JSON.stringify({ type: 'commands', commands: many }))).toMatch(/more than/);
    // A conversation file is an absolute path: tether may hand it back to the agent to reopen.
    expect(refusal('{"type":"session-file","path":"relative/x.jsonl"}')).toMatch(/^path:/);
    expect(refusal('{"type":"session-file","path":"/a\\u0000b"}')).toMatch(/^path:/);
    expect(refusal('{"type":"session-file"}')).toMatch(/^path:/);
    expect(refusal(JSON.stringify({ ...hello, sessionFile: 7 }))).toMatch(/^sessionFile:/);
  });

  it('keeps only the start of a long user message', () => {
    const m = decodeAgentMessage(JSON.stringify({ type: 'user-message', text: 'x'.repeat(MAX_USER_MESSAGE_CHARS * 2) }));
    expect(m.type === 'user-message' && m.text.length).toBe(MAX_USER_MESSAGE_CHARS);
  });

  it('puts the socket in the run dir it is given', () => {
    expect(agentSocketPath('/d/run')).toBe('/d/run/agent.sock');
    expect(agentSocketPath('/elsewhere')).toBe('/elsewhere/agent.sock');
  });

  it('splits lines at any chunking, UTF-8 split across chunks included', () => {
    const lines = ['{"a":"é€😀"}', '{"b":1}', '{"c":"x"}'];
    const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 8 }), (cuts) => {
        const reader = new JsonLineReader();
        const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
        const out: string[] = [];
        for (let i = 0; i + 1 < points.length; i++) out.push(...reader.push(bytes.subarray(points[i], points[i + 1])));
        expect(out).toEqual(lines);
      }),
    );
  });

  it('refuses a line over the limit and keeps nothing of it', () => {
    const reader = new JsonLineReader(16);
    expect(() => reader.push(Buffer.from('x'.repeat(10)))).not.toThrow();
    expect(() => reader.push(Buffer.from('x'.repeat(10)))).toThrow(/longer than 16 bytes/);
    expect(reader.push(Buffer.from('ok\n'))).toEqual(['ok']);
  });
});

describe('agentSocketPath', () => {
  it('lives in the run dir, or in a short per-user temp dir when that path is too long for a socket', async () => {
    const { agentSocketPath, MAX_SOCKET_PATH_BYTES } = await import('../../src/agent/wire/socket-path.js');
    expect(agentSocketPath('/home/u/.local/share/tether/run')).toBe('/home/u/.local/share/tether/run/agent.sock');
    const deep = `/home/u/${'nested/'.repeat(20)}tether/run`;
    const a = agentSocketPath(deep);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    expect(a).toBe(agentSocketPath(deep)); // the extension finds the same one
    expect(a).not.toBe(agentSocketPath(`${deep}2`));
  });
});
