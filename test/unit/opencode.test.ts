/**
 * opencode's adapter without opencode (docs/agents.md "opencode"): what its plugin sends of the
 * bus events, how those reports become state, asks and stops, the config layer that loads the
 * plugin beside the user's own, the argv that reopens a conversation, and its commands. The
 * real opencode is driven in test/e2e/opencode.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { opencodeAdapter } from '../../src/agent/opencode/adapter.js';
import { opencodeCommands } from '../../src/agent/opencode/commands.js';
import { OpencodeReader } from '../../src/agent/opencode/events.js';
import { configContent, opencodeArgv, pluginUrl } from '../../src/agent/opencode/launch.js';
import { eventFields, newSentMemory } from '../../src/agent/opencode/plugin-fields.js';
import { MAX_HOOK_FIELD_CHARS } from '../../src/agent/wire/hook-wire.js';

const S = 'ses_abc123';

describe("the plugin's fields", () => {
  it('sends a status only when it changed, a title only when new, a tool part only once it runs', () => {
    const sent = newSentMemory();
    const status = (type: string) => eventFields({ type: 'session.status', properties: { sessionID: S, status: { type } } }, sent);
    expect(status('busy')).toEqual({ type: 'session.status', session: S, status: 'busy' });
    expect(status('busy')).toBeNull();
    expect(status('idle')).toEqual({ type: 'session.status', session: S, status: 'idle' });
    const updated = (title: string) => eventFields({ type: 'session.updated', properties: { sessionID: S, info: { id: S, title } } }, sent);
    expect(updated('Fix the tests')).toMatchObject({ type: 'session.updated', session: S, title: 'Fix the tests' });
    expect(updated('Fix the tests')).toBeNull();
    const part = (status: string) =>
      eventFields(
        {
          type: 'message.part.updated',
          properties: { part: { type: 'tool', tool: 'bash', callID: 'c1', sessionID: S, state: { status } } },
        },
        sent,
      );
    expect(part('pending')).toBeNull();
    expect(part('running')).toEqual({ type: 'message.part.updated', session: S, tool: 'bash', call: 'c1', status: 'running' });
    expect(eventFields({ type: 'message.part.delta', properties: {} }, sent)).toBeNull();
  });

  it('cuts a long list of questions so that it still parses', () => {
    const options = Array.from({ length: 40 }, (_, i) => ({ label: `option ${i} ${'x'.repeat(150)}`, description: 'd' }));
    const questions = Array.from({ length: 5 }, () => ({ question: 'q?', header: 'h', options }));
    const f = eventFields({ type: 'question.asked', properties: { sessionID: S, id: 'que_1', questions } }, newSentMemory())!;
    expect(f.questions!.length).toBeLessThanOrEqual(MAX_HOOK_FIELD_CHARS);
    expect(Array.isArray(JSON.parse(f.questions!))).toBe(true);
  });
});

describe('reports as state', () => {
  const events = (o: { events: readonly { event: string; tool?: string }[] }) =>
    o.events.map((e) => (e.tool ? `${e.event} ${e.tool}` : e.event));

  it('a turn with a tool: start, tool, end; the second idle ends nothing; a subagent changes nothing', () => {
    const r = new OpencodeReader();
    expect(events(r.read('oc', { type: 'tether.hello', cwd: '/w' }))).toEqual(['agent.ready']);
    expect(r.read('oc', { type: 'session.status', session: S, status: 'busy' })).toMatchObject({
      conversation: S,
      events: [{ event: 'agent.start' }],
    });
    expect(events(r.read('oc', { type: 'message.part.updated', session: S, tool: 'bash', call: 'c1', status: 'running' }))).toEqual([
      'tool.start bash',
    ]);
    expect(events(r.read('oc', { type: 'session.created', session: 'ses_child', parent: S }))).toEqual([]);
    expect(
      events(r.read('oc', { type: 'message.part.updated', session: 'ses_child', tool: 'read', call: 'c9', status: 'running' })),
    ).toEqual([]);
    expect(events(r.read('oc', { type: 'message.part.updated', session: S, tool: 'bash', call: 'c1', status: 'completed' }))).toEqual([
      'tool.end',
    ]);
    expect(events(r.read('oc', { type: 'session.idle', session: S }))).toEqual(['agent.end']);
    expect(events(r.read('oc', { type: 'session.idle', session: S }))).toEqual([]);
  });

  it('a permission asked before its call runs: the call starts with the ask, once; a rejected call ends nothing', () => {
    const r = new OpencodeReader();
    r.read('oc', { type: 'session.status', session: S, status: 'busy' });
    const asked = r.read('oc', { type: 'permission.asked', session: S, id: 'per_1', permission: 'bash', command: 'rm -rf x', call: 'c2' });
    expect(events(asked)).toEqual(['tool.start bash']);
    expect(asked.ask).toMatchObject({ kind: 'permission', tool: 'bash', concern: 'rm -rf x', landing: 'report' });
    expect(asked.ask!.choices.map((c) => [c.id, c.keys, c.effect])).toEqual([
      ['once', [{ type: 'key', name: 'enter' }], 'run'],
      [
        'always',
        [
          { type: 'key', name: 'right' },
          { type: 'key', name: 'enter' },
          { type: 'key', name: 'enter' },
        ],
        'run',
      ],
      ['reject', [{ type: 'key', name: 'escape' }], 'wait'],
    ]);
    expect(events(r.read('oc', { type: 'message.part.updated', session: S, tool: 'bash', call: 'c2', status: 'running' }))).toEqual([]);
    expect(r.read('oc', { type: 'permission.replied', session: S, id: 'per_1', reply: 'reject' })).toMatchObject({
      askEnded: { why: 'terminal', answered: 'reject' },
    });
    expect(events(r.read('oc', { type: 'message.part.updated', session: S, tool: 'bash', call: 'c2', status: 'error' }))).toEqual([]);
  });

  it('a question of one question is an ask of its options by digit; several questions wait without one', () => {
    const r = new OpencodeReader();
    const one = JSON.stringify([{ question: 'Which?', header: 'Pick', options: ['Red', 'Blue'] }]);
    const asked = r.read('oc', { type: 'question.asked', session: S, id: 'que_1', questions: one });
    expect(asked.ask).toMatchObject({ kind: 'question', concern: 'Which?', detail: 'Pick' });
    expect(asked.ask!.choices.map((c) => [c.id, c.label, c.keys])).toEqual([
      ['1', 'Red', [{ type: 'keys', data: '1' }]],
      ['2', 'Blue', [{ type: 'keys', data: '2' }]],
    ]);
    const two = JSON.stringify([
      { question: 'A?', options: ['x'] },
      { question: 'B?', options: ['y'] },
    ]);
    const waits = r.read('oc', { type: 'question.asked', session: S, id: 'que_2', questions: two });
    expect(waits.ask).toBeUndefined();
    expect(waits).toMatchObject({ asks: 'a question', events: [{ event: 'agent.end', idle: true }] });
  });

  it("a title is opencode's own, never its placeholder", () => {
    const r = new OpencodeReader();
    expect(r.read('oc', { type: 'session.updated', session: S, title: 'New session - 2026-11-28T12:57:07.458Z' }).title).toBeUndefined();
    expect(r.read('oc', { type: 'session.updated', session: S, title: 'Marker Title Words' }).title).toBe('Marker Title Words');
  });

  it('an error it gives up on is the stop (a 429 a usage limit), and the idle after it ends nothing; an interruption is no stop', () => {
    const r = new OpencodeReader();
    r.read('oc', { type: 'session.status', session: S, status: 'busy' });
    expect(r.read('oc', { type: 'session.error', session: S, error: 'APIError', message: 'Bad request', code: '400' }).stop).toEqual({
      kind: 'error',
      message: 'Bad request',
    });
    expect(events(r.read('oc', { type: 'session.idle', session: S }))).toEqual([]);
    r.read('oc', { type: 'session.status', session: S, status: 'busy' });
    expect(r.read('oc', { type: 'session.error', session: S, error: 'APIError', message: 'slow down', code: '429' }).stop?.kind).toBe(
      'usage-limit',
    );
    expect(r.read('oc', { type: 'session.error', session: S, error: 'MessageAbortedError' }).stop).toBeUndefined();
  });
});

describe('launch', () => {
  const ctx = { node: '/usr/bin/node', distDir: '/opt/tether/dist', prepared: null };

  it("adds tether's plugin to the user's own OPENCODE_CONFIG_CONTENT, once; leaves a value that is not a JSON object alone", () => {
    const url = pluginUrl(ctx);
    expect(url).toBe('file:///opt/tether/dist/agent/opencode/plugin.js');
    expect(JSON.parse(configContent(ctx, {})!)).toEqual({ plugin: [url] });
    const own = JSON.stringify({ model: 'a/b', plugin: ['their-plugin'] });
    expect(JSON.parse(configContent(ctx, { OPENCODE_CONFIG_CONTENT: own })!)).toEqual({ model: 'a/b', plugin: ['their-plugin', url] });
    expect(JSON.parse(configContent(ctx, { OPENCODE_CONFIG_CONTENT: JSON.stringify({ plugin: [url] }) })!)).toEqual({ plugin: [url] });
    expect(configContent(ctx, { OPENCODE_CONFIG_CONTENT: '{ // jsonc\n}' })).toBeNull();
    expect(opencodeAdapter.env!(ctx, { OPENCODE_CONFIG_CONTENT: '[1]' })).toEqual({});
  });

  it('reopens a conversation with -s, never an id that could be read as something else', () => {
    expect(opencodeArgv(['opencode', '--agent', 'plan'], S)).toEqual(['opencode', '--agent', 'plan', '-s', S]);
    expect(opencodeArgv(['opencode'], null)).toEqual(['opencode']);
    expect(opencodeArgv(['opencode'], '-x; rm')).toEqual(['opencode']);
  });
});

describe('commands', () => {
  const root = mkdtempSync(join(tmpdir(), 'tether-opencode-unit-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("lists the built-ins, then the project's and the user's command files and config commands", async () => {
    const cwd = join(root, 'work');
    const config = join(root, 'config', 'opencode');
    mkdirSync(join(cwd, '.opencode', 'command'), { recursive: true });
    mkdirSync(join(config, 'commands'), { recursive: true });
    writeFileSync(join(cwd, '.opencode', 'command', 'check.md'), '---\ndescription: "Run the check"\nagent: build\n---\nRun it.\n');
    writeFileSync(join(config, 'commands', 'mine.md'), '# My own\nbody\n');
    writeFileSync(join(config, 'commands', 'has space.md'), 'x');
    writeFileSync(join(config, 'opencode.json'), JSON.stringify({ command: { deploy: { template: 'x', description: 'Deploy it' } } }));
    const list = await opencodeCommands({ cwd, env: { XDG_CONFIG_HOME: join(root, 'config') }, reported: null });
    expect(list.slice(0, 3).map((c) => c.name)).toEqual(['agents', 'compact', 'connect']);
    expect(list).toContainEqual({ name: 'check', description: 'Run the check (project)' });
    expect(list).toContainEqual({ name: 'mine', description: 'My own (user)' });
    expect(list).toContainEqual({ name: 'deploy', description: 'Deploy it (user)' });
    expect(list.map((c) => c.name)).not.toContain('has space');
  });
});
