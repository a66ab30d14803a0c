/**
 * The prompt routes against a real daemon and real tmux (docs/api.md "Prompts"), with `cat` as
 * the session's program and an agent speaking the agent socket beside it (as pi's extension does)
 * where the queue needs a turn: every bad prompt refused with the field it breaks and nothing
 * queued or typed; hostile text typed literally, once, never run; prompts queued in order while the
 * agent works, typed one by one as its turns end and confirmed by its report; the queue's limit; a
 * prompt to an agent that exited.
 */
import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fakeAgent, type FakeAgent } from '../helpers/agent-socket.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { eventually } from '../helpers/tmux.js';
import type { PromptRecord } from '../../src/protocol/prompt.js';

const TOML = `[agent]\ncommand = "cat"\ndefault_session = "pr-main"\n[agents.quick]\ncommand = "/bin/true"\n`;
const HOSTILE_FILES = ['/tmp/tether-prompt-hostile-1', '/tmp/tether-prompt-hostile-2'];
const WAIT_MS = 30_000;

describe('prompts over REST', () => {
  const forget = () => HOSTILE_FILES.forEach((f) => rmSync(f, { force: true }));
  const fx = useDaemon(TOML, { before: forget, after: forget, sessions: ['pr', 'busy'] });
  const post = (session: string, body: unknown) => fx.json('POST', `/sessions/${session}/prompt`, body);
  const listed = async (session: string) => (await (await fx.d.get(`/sessions/${session}/prompts`)).json()) as PromptRecord[];
  const screen = async (session: string) => fx.tmux.tmux('capture-pane', '-p', '-t', `=${session}:`);
  const option = async (session: string) => (await fx.tmux.tmux('show-options', '-qv', '-t', `=${session}:`, '@tether-prompts')).trim();

  it('refuses every bad prompt with the field it breaks, and queues nothing', async () => {
    const refusals: [unknown, number, RegExp][] = [
      [{}, 400, /text/],
      [{ text: '' }, 400, /text/],
      [{ text: ' \n\t ' }, 400, /text: must not be blank/],
      [{ text: 'x'.repeat(100_001) }, 400, /text/],
      [{ text: 'red \u001b[31m text' }, 400, /text: must not contain control characters/],
      [{ text: 'nul \u0000' }, 400, /text/],
      [{ text: 'del \u007f' }, 400, /text/],
      [{ text: 5 }, 400, /text/],
      [{ text: 'x', id: 'not an id' }, 400, /id/],
      [{ text: 'x', id: 'x'.repeat(65) }, 400, /id/],
      [{ text: 'x', id: 7 }, 400, /id/],
      [{ text: 'x', more: true }, 400, /more/],
      [['x'], 400, /./],
    ];
    for (const [body, status, message] of refusals) {
      const res = await post('pr', body);
      const answer = (await res.json()) as { error: string; message: string };
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(answer.error).toBe('bad-request');
      expect(answer.message).toMatch(message);
    }
    expect((await post('nope', { text: 'x' })).status).toBe(404);
    expect((await post('a;b', { text: 'x' })).status).toBe(400);
    expect((await fx.json('DELETE', '/sessions/pr/prompts/not!an!id')).status).toBe(400);
    expect((await fx.json('DELETE', '/sessions/pr/prompts/unknown')).status).toBe(404);
    expect((await fx.d.get('/sessions/nope/prompts')).status).toBe(404);
    expect(await listed('pr')).toEqual([]);
    expect(await option('pr')).toBe('');
  });

  it('hostile text reaches the program literally, once, and nothing in it runs', async () => {
    const text = `echo hi; touch ${HOSTILE_FILES[0]} #{pane_id} $(touch ${HOSTILE_FILES[1]}) ../../etc "q" 'q' \\ ~`;
    const res = await post('pr', { text, id: 'hostile' });
    expect(res.status).toBe(202);
    await eventually(async () => (await listed('pr')).find((p) => p.id === 'hostile')?.status === 'typed', WAIT_MS, 50, 'typed');
    // cat shows what it read, then prints it back: the text, exactly, twice; no tmux format expanded.
    await eventually(async () => (await screen('pr')).split(text).length - 1 === 2, WAIT_MS, 50, 'the text twice on the screen');
    for (const f of HOSTILE_FILES) expect(existsSync(f)).toBe(false);
    expect(JSON.parse(await option('pr'))).toMatchObject({ v: 1, prompts: [{ id: 'hostile', text, status: 'typed' }] });
  });

  describe('with an agent reporting from the session', () => {
    let agent: FakeAgent;
    const status = async (id: string) => (await listed('busy')).find((p) => p.id === id)?.status;

    it('queued in order while the agent works, typed one by one as each turn ends, confirmed by its report', async () => {
      const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=busy:', '#{pane_id}')).trim();
      agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
      expect((await agent.welcomed).type).toBe('welcome');
      agent.event('agent.start');
      await eventually(
        async () => ((await (await fx.d.get('/sessions/busy')).json()) as { agentState: string }).agentState === 'thinking',
        WAIT_MS,
        50,
        'thinking',
      );
      for (const id of ['one', 'two', 'three'])
        expect(((await (await post('busy', { text: `prompt ${id}`, id })).json()) as PromptRecord).status).toBe('queued');
      expect((await listed('busy')).map((p) => [p.id, p.status])).toEqual([
        ['one', 'queued'],
        ['two', 'queued'],
        ['three', 'queued'],
      ]);
      for (const id of ['one', 'two', 'three']) {
        // The turn ends: the next prompt is typed, and only it.
        agent.event('agent.end', { idle: true });
        await eventually(async () => (await screen('busy')).includes(`prompt ${id}`), WAIT_MS, 50, `prompt ${id} typed`);
        expect(await status(id)).toBe('typing');
        // The agent reports it took it, and starts the turn.
        agent.event('agent.start');
        agent.userMessage(`prompt ${id}`);
        await eventually(async () => (await status(id)) === 'submitted', WAIT_MS, 50, `prompt ${id} submitted`);
      }
      // Each typed once: cat shows each line as typed and prints it back once its Enter came.
      await eventually(async () => (await screen('busy')).split('prompt ').length - 1 === 6, WAIT_MS, 50, 'three lines, each twice');
      expect((await screen('busy')).split('prompt ').length - 1).toBe(6);
    });

    it('holds at most 20 queued prompts; a cancelled one frees its place', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `q${i}`);
      for (const id of ids) expect((await post('busy', { text: `queued ${id}`, id })).status).toBe(202);
      const full = await post('busy', { text: 'one too many', id: 'q20' });
      expect(full.status).toBe(409);
      expect(((await full.json()) as { error: string }).error).toBe('prompt-queue-full');
      expect((await fx.json('DELETE', '/sessions/busy/prompts/q0')).status).toBe(200);
      expect((await post('busy', { text: 'one too many', id: 'q20' })).status).toBe(202);
      for (const id of [...ids.slice(1), 'q20']) expect((await fx.json('DELETE', `/sessions/busy/prompts/${id}`)).status).toBe(200);
      expect((await listed('busy')).filter((p) => p.status === 'queued')).toEqual([]);
      agent.close();
    });
  });

  it('a prompt to an agent that exited is refused, and nothing is queued', async () => {
    expect((await fx.json('POST', '/sessions', { name: 'gone', agent: 'quick' })).status).toBe(201);
    await eventually(
      async () => ((await (await fx.d.get('/sessions/gone')).json()) as { state: string }).state === 'exited',
      WAIT_MS,
      50,
      'exited',
    );
    const res = await post('gone', { text: 'anyone there?' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toBe('session-exited');
    expect(await listed('gone')).toEqual([]);
  });
});
