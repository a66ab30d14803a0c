/**
 * An agent that exits, against a real daemon, real tmux and real WebSocket clients: its session
 * stays and keeps streaming (the last screen, session-meta saying `exited` with the status), input
 * to it is refused, and a respawn over REST or over the stream starts the agent again in the same
 * pane, with the positions growing and clients that stayed seeing the new agent. A respawn of a
 * running agent is refused and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SessionMetaFrame } from '../../src/reference-client/index.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

/** The agent is a shell: a test makes it exit with a message, as a crashing agent would. */
const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;
const CRASH = 'echo crash-$((40+2)); exit 3\r';

describe('an exited agent', () => {
  const fx = useDaemon(AGENT);
  const { mirror, json } = fx;
  const metas = (m: Mirror): SessionMetaFrame[] => m.received.flatMap((r) => (r.kind === 'meta' ? [r.frame] : []));
  const lastMeta = (m: Mirror) => metas(m).at(-1);
  const lastSeq = (m: Mirror) => m.received.flatMap((r) => (r.kind === 'data' || r.kind === 'snapshot' ? [r.seq] : [])).at(-1) ?? 0;
  const paneOf = async (id: string) => (await fx.tmux.tmux('display', '-p', '-t', `=${id}:`, '#{pane_id} #{pane_dead} #{pane_pid}')).trim();
  const listed = async (id: string) =>
    ((await (await fx.d.get('/sessions')).json()) as { id: string; state: string; exitStatus: number | null }[]).find((s) => s.id === id);

  /** Creates a session whose shell has exited with status 3 after printing `crash-42`, watched by a client. */
  const crashed = async (id: string, cwd?: string) => {
    expect((await json('POST', '/sessions', { name: id, ...(cwd !== undefined ? { cwd } : {}) })).status).toBe(201);
    const m = mirror(id);
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    expect(lastMeta(m)).toMatchObject({ name: id, state: 'running' });
    m.stream.sendKeys(CRASH);
    await eventually(() => lastMeta(m)?.state === 'exited' && lastMeta(m)?.exitStatus === 3, 15_000);
    return m;
  };

  it('a client streaming stays open and sees exited with status 3 under the last screen; a new client gets a snapshot of it', async () => {
    const m = await crashed('crashy', fx.home.dir);
    expect(m.stream.status).toBe('open');
    expect(m.errors()).toEqual([]);
    // tmux drops a dying pane's last output from the control stream: the client that stayed gets it by a resync.
    await eventually(async () => (await m.text()).includes('crash-42'), 15_000);
    expect(await listed('crashy')).toMatchObject({ state: 'exited', exitStatus: 3 });

    const late = mirror('crashy');
    await eventually(() => late.kinds().includes('snapshot'), 15_000);
    expect(late.kinds()[0]).toBe('meta');
    expect(lastMeta(late)).toMatchObject({ name: 'crashy', state: 'exited', exitStatus: 3 });
    await eventually(async () => (await late.text()).includes('crash-42'), 15_000);
    expect(late.errors()).toEqual([]);
    expect(late.stream.status).toBe('open');
    // The side channel takes the session too, and says it exited.
    const side = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/sessions/crashy/side`, {
      headers: { authorization: `Bearer ${fx.d.token}` },
    });
    const texts: { type: string; state?: string; exitStatus?: number }[] = [];
    side.on('message', (data) => texts.push(JSON.parse((data as Buffer).toString('utf8')) as { type: string }));
    try {
      await eventually(() => texts.some((t) => t.type === 'session-meta'), 15_000);
      expect(texts[0]).toMatchObject({ type: 'session-meta', state: 'exited', exitStatus: 3 });
      expect(texts.filter((t) => t.type === 'error')).toEqual([]);
      expect(side.readyState).toBe(WebSocket.OPEN);
    } finally {
      side.close();
    }
  });

  it('input to an exited agent is refused with session-exited, over REST (409) and the stream', async () => {
    const m = mirror('crashy');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    const res = await json('POST', '/sessions/crashy/input', { type: 'keys', data: 'echo typed-into-the-dead\r' });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'session-exited' });
    m.stream.sendKeys('echo typed-into-the-dead\r');
    await eventually(() => m.errors().some((e) => e.code === 'session-exited'), 15_000);
    expect(m.stream.status).toBe('open');
    expect(await listed('crashy')).toMatchObject({ state: 'exited', exitStatus: 3 });
  });

  it('a respawn over REST starts the agent again in the same pane: clients that stayed see it run, positions grow', async () => {
    const m = mirror('crashy');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    const [paneBefore, dead, pidBefore] = (await paneOf('crashy')).split(' ');
    expect(dead).toBe('1');
    const seqBefore = lastSeq(m);

    const res = await json('POST', '/sessions/crashy/respawn');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'crashy', state: 'running', exitStatus: null });
    const [paneAfter, deadAfter, pidAfter] = (await paneOf('crashy')).split(' ');
    expect(paneAfter).toBe(paneBefore);
    expect(deadAfter).toBe('0');
    expect(pidAfter).not.toBe(pidBefore);
    await eventually(() => lastMeta(m)?.state === 'running', 15_000);
    expect(lastMeta(m)?.exitStatus).toBeUndefined();
    expect(await listed('crashy')).toMatchObject({ state: 'running', exitStatus: null });

    // The new shell takes input, and its output reaches the client that stayed, further on. It
    // runs where the first one started, with the environment tether gives its agents.
    const probe = 'echo "back-$((6*7)) in=$(pwd) data=$TETHER_DATA_DIR"\r';
    expect((await json('POST', '/sessions/crashy/input', { type: 'keys', data: probe })).status).toBe(204);
    await eventually(async () => (await m.text()).includes(`back-42 in=${fx.home.dir} data=${fx.home.dataDir}`), 15_000);
    expect(lastSeq(m)).toBeGreaterThan(seqBefore);
    expect(m.stream.status).toBe('open');
    expect(m.errors()).toEqual([]);
  });

  it('a respawn message on the stream does the same', async () => {
    const m = await crashed('streamy');
    const [paneBefore] = (await paneOf('streamy')).split(' ');
    const seqBefore = lastSeq(m);
    m.stream.respawn();
    await eventually(() => lastMeta(m)?.state === 'running', 15_000);
    expect((await paneOf('streamy')).split(' ').slice(0, 2)).toEqual([paneBefore, '0']);
    m.stream.sendKeys('echo again-$((6*7))\r');
    await eventually(async () => (await m.text()).includes('again-42'), 15_000);
    expect(lastSeq(m)).toBeGreaterThan(seqBefore);
    expect(m.errors()).toEqual([]);
    // And it can die and be respawned again.
    m.stream.sendKeys('exit 5\r');
    await eventually(() => lastMeta(m)?.state === 'exited' && lastMeta(m)?.exitStatus === 5, 15_000);
    m.stream.respawn();
    await eventually(() => lastMeta(m)?.state === 'running', 15_000);
  });

  it('a respawn of a running agent is refused (409 session-running, an error frame on the stream) and changes nothing', async () => {
    expect((await json('POST', '/sessions', { name: 'alive' })).status).toBe(201);
    const m = mirror('alive');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    m.stream.sendKeys('echo still-$((6*7))\r');
    await eventually(async () => (await m.text()).includes('still-42'), 15_000);
    const before = await paneOf('alive');

    const res = await json('POST', '/sessions/alive/respawn');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'session-running' });
    m.stream.respawn();
    await eventually(() => m.errors().some((e) => e.code === 'session-running'), 15_000);

    expect(await paneOf('alive')).toBe(before);
    expect(await m.text()).toContain('still-42');
    expect(lastMeta(m)?.state).toBe('running');
    expect((await json('POST', '/sessions/alive/input', { type: 'keys', data: 'echo fine-$((6*7))\r' })).status).toBe(204);
    await eventually(async () => (await m.text()).includes('fine-42'), 15_000);
  });

  it('a respawn of an unknown session is a 404; a body is refused with 400', async () => {
    const res = await json('POST', '/sessions/nobody/respawn');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'session-not-found' });
    const withBody = await json('POST', '/sessions/alive/respawn', { now: true });
    expect(withBody.status).toBe(400);
    expect(await withBody.json()).toEqual({ error: 'bad-request', message: 'body/now: unknown field (a respawn takes no fields)' });
  });
});
