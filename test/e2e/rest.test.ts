/**
 * The REST surface against a real daemon and real tmux: the user's flow from create to delete,
 * every route with and without the token, hostile values, and fuzzed bodies.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fakeAgent } from '../helpers/agent-socket.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;
const DOCUMENTED = new Set([400, 401, 404, 409, 413, 503]);
const HOSTILE_FILE = '/tmp/tether-rest-hostile';

interface Item {
  id: string;
  name: string;
  description: string;
  state: string;
  agentState: string | null;
  lastOutputAt: string | null;
  createdAt: string | null;
  clients: number;
  project: string | null;
  cwd: string | null;
}

describe('REST sessions', () => {
  const forgetHostileFile = () => rmSync(HOSTILE_FILE, { force: true });
  const fx = useDaemon(AGENT, { before: forgetHostileFile, after: forgetHostileFile });
  const { json } = fx;
  const tmuxNames = async () => (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').sort();

  it('create -> list -> describe -> input -> thumbnail -> delete, as a user sees it', async () => {
    const created = await json('POST', '/sessions', { name: 'flow', project: 'web app' });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ id: 'flow', name: 'flow' });

    const list = (await (await fx.d.get('/sessions')).json()) as Item[];
    const item = list.find((s) => s.id === 'flow')!;
    expect(item).toMatchObject({ id: 'flow', name: 'flow', description: '', state: 'running', agentState: null, project: 'web app' });
    expect(Number.isNaN(Date.parse(item.createdAt!))).toBe(false);
    expect(item.clients).toBe(0);

    const description = 'refactor; #{pane_id} $(touch x) "quoted"\ttab\nsecond line ✓';
    const patched = await json('PATCH', '/sessions/flow', { description });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ id: 'flow', description });
    expect(await fx.tmux.tmux('show-options', '-v', '-t', '=flow:', '@description')).toBe(description + '\n');
    const again = (await (await fx.d.get('/sessions')).json()) as Item[];
    expect(again.find((s) => s.id === 'flow')!.description).toBe(description);
    // No description given: nothing changes, and the answer says what is in effect.
    const nothing = await json('PATCH', '/sessions/flow', {});
    expect(nothing.status).toBe(200);
    expect(await nothing.json()).toEqual({ id: 'flow', description });
    expect(await fx.tmux.tmux('show-options', '-v', '-t', '=flow:', '@description')).toBe(description + '\n');
    expect((await json('PATCH', '/sessions/nope', {})).status).toBe(404);

    await eventually(async () => (await fx.d.get('/sessions')).ok);
    expect((await json('POST', '/sessions/flow/input', { type: 'keys', data: 'echo hi' })).status).toBe(204);
    expect((await json('POST', '/sessions/flow/input', { type: 'key', name: 'enter' })).status).toBe(204);
    await eventually(async () => /^hi$/m.test(await fx.tmux.capture('=flow:')), 15_000);

    const thumb = await fx.d.get('/sessions/flow/thumbnail');
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await thumb.text();
    const lines = text.split('\n');
    expect(lines).toHaveLength(13);
    expect(lines[12]).toBe('');
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(40);
    expect(lines.some((l) => l === 'hi')).toBe(true);

    const commands = (await (await fx.d.get('/sessions/flow/commands')).json()) as { name: string; description: string }[];
    expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['settings', 'model', 'compact', 'quit']));

    expect((await fx.d.get('/sessions/flow', { method: 'DELETE' })).status).toBe(204);
    expect(await tmuxNames()).not.toContain('flow');
    const after = (await (await fx.d.get('/sessions')).json()) as Item[];
    expect(after.map((s) => s.id)).not.toContain('flow');
  });

  it('GET /commands carries the argument schema an agent reports, end to end', async () => {
    expect(((await (await fx.d.get('/sessions/pi-main/commands')).json()) as { args?: unknown }[]).some((c) => 'args' in c)).toBe(false);
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=pi-main:', '#{pane_id}')).trim();
    const agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    try {
      expect((await agent.welcomed).type).toBe('welcome');
      const args = { target: { type: 'string', enum: ['staging', 'prod'] }, dryRun: { type: 'boolean' } };
      agent.commands([
        { name: 'deploy', description: 'Deploy the app', source: 'extension', args },
        { name: 'review', description: 'Review the diff', source: 'prompt' },
      ]);
      const listed = async () => (await (await fx.d.get('/sessions/pi-main/commands')).json()) as { name: string; args?: unknown }[];
      await eventually(async () => (await listed()).some((c) => c.name === 'deploy'), 15_000, 100, 'the reported commands listed');
      const commands = await listed();
      expect(commands.find((c) => c.name === 'deploy')).toEqual({ name: 'deploy', description: 'Deploy the app', args });
      expect(commands.find((c) => c.name === 'review')).toEqual({ name: 'review', description: 'Review the diff' });
    } finally {
      agent.close();
    }
  });

  it('creates pi-<n> when no name is given, and 409 for a taken name', async () => {
    const a = await json('POST', '/sessions', {});
    expect(a.status).toBe(201);
    const { id } = (await a.json()) as { id: string };
    expect(id).toMatch(/^pi-\d+$/);
    const dup = await json('POST', '/sessions', { name: id });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toMatchObject({ error: 'session-exists' });
    expect((await fx.d.get(`/sessions/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('409 for the name of a tmux session that is not tether’s, which is left as it was; the name is free once it is gone', async () => {
    await fx.tmux.tmux('new-session', '-d', '-s', 'theirs', '/bin/sh');
    const dup = await json('POST', '/sessions', { name: 'theirs', project: 'p' });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toMatchObject({ error: 'session-exists' });
    expect(await fx.tmux.tmux('show-options', '-qv', '-t', '=theirs:', '@created')).toBe('');
    expect(await fx.tmux.tmux('show-options', '-qv', '-t', '=theirs:', '@project')).toBe('');
    await fx.tmux.tmux('kill-session', '-t', '=theirs');
    expect((await json('POST', '/sessions', { name: 'theirs' })).status).toBe(201);
    expect((await fx.d.get('/sessions/theirs', { method: 'DELETE' })).status).toBe(204);
  });

  it('unknown sessions are 404 session-not-found on every route', async () => {
    for (const [method, path, body] of [
      ['PATCH', '/sessions/nope', { description: 'x' }],
      ['DELETE', '/sessions/nope', undefined],
      ['GET', '/sessions/nope/thumbnail', undefined],
      ['POST', '/sessions/nope/input', { type: 'keys', data: 'x' }],
      ['GET', '/sessions/nope/commands', undefined],
    ] as const) {
      const res = await json(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'session-not-found' });
    }
  });

  it('every route: 401 without the token or with a wrong one, before any work; header and query both work', async () => {
    const routes: [string, string, unknown][] = [
      ['GET', '/health', undefined],
      ['GET', '/sessions', undefined],
      ['POST', '/sessions', { name: 'unauth-made' }],
      ['PATCH', '/sessions/pi-main', { description: 'unauth' }],
      ['DELETE', '/sessions/pi-main', undefined],
      ['GET', '/sessions/pi-main/thumbnail', undefined],
      ['POST', '/sessions/pi-main/input', { type: 'keys', data: 'touch /tmp/unauth' }],
      ['GET', '/sessions/pi-main/commands', undefined],
      ['GET', '/sessions/pi-main/changes', undefined],
      ['GET', '/sessions/pi-main/changes/diff?path=README.md', undefined],
    ];
    for (const [method, path, body] of routes) {
      const init = { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) };
      for (const url of [`${fx.d.base}${path}`, `${fx.d.base}${path}${path.includes('?') ? '&' : '?'}token=wrong`]) {
        const res = await fetch(url, init);
        expect(res.status, `${method} ${url}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await res.json()).toMatchObject({ error: 'unauthorized' });
      }
      const wrongHeader = await fetch(`${fx.d.base}${path}`, { ...init, headers: { ...init.headers, authorization: 'Bearer wrong' } });
      expect(wrongHeader.status).toBe(401);
    }
    // Nothing was done: no session made, none deleted, the description unchanged.
    expect(await tmuxNames()).toContain('pi-main');
    expect(await tmuxNames()).not.toContain('unauth-made');
    expect(await fx.tmux.tmux('show-options', '-qv', '-t', '=pi-main:', '@description')).toBe('');
    // The token works in the header and in the query.
    expect((await fetch(`${fx.d.base}/sessions`, { headers: { authorization: `Bearer ${fx.d.token}` } })).status).toBe(200);
    expect((await fetch(`${fx.d.base}/sessions?token=${encodeURIComponent(fx.d.token)}`)).status).toBe(200);
  });

  it('hostile values are stored exactly or refused with 400; tmux keeps running and nothing runs', async () => {
    const names = ['a;kill-server', '#{pane_id}', `$(touch ${HOSTILE_FILE})`, '../../etc', 'a\nb', 'a\tb', 'a\u0000b', 'x'.repeat(65), ''];
    for (const name of names) {
      const res = await json('POST', '/sessions', { name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'bad-request' });
    }
    const descriptions = [
      'a;kill-server',
      '#{pane_id}',
      `$(touch ${HOSTILE_FILE})`,
      '`touch x`',
      '../../etc/passwd',
      'l1\nl2\r\n',
      '\ttab',
      '~/x',
      'it\'s "q"',
      '\\;',
      'a;',
    ];
    for (const description of descriptions) {
      const res = await json('PATCH', '/sessions/pi-main', { description });
      expect(res.status).toBe(200);
      expect(await fx.tmux.tmux('show-options', '-v', '-t', '=pi-main:', '@description')).toBe(description + '\n');
    }
    expect((await json('PATCH', '/sessions/pi-main', { description: 'nul\u0000' })).status).toBe(400);
    expect((await json('PATCH', '/sessions/pi-main', { description: 'x'.repeat(1025) })).status).toBe(400);
    expect((await json('PATCH', '/sessions/pi-main', { description: 'x', extra: 1 })).status).toBe(400);
    expect((await json('POST', '/sessions/pi-main/input', { type: 'key', name: 'Up;kill-server' })).status).toBe(400);
    expect((await json('POST', '/sessions/pi-main/input', { type: 'key', name: '#{pane_id}' })).status).toBe(400);
    // Literal text is typed, never run by tmux; a body over 1 MB is refused as too large.
    expect(
      (await json('POST', '/sessions/pi-main/input', { type: 'keys', data: `;kill-server #{pane_id} $(touch ${HOSTILE_FILE})` })).status,
    ).toBe(204);
    // The 413 reaches a client still sending its body (the connection closes in stages).
    const tooLarge = await json('POST', '/sessions/pi-main/input', { type: 'keys', data: 'x'.repeat(2 * 1024 * 1024) });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ error: 'payload-too-large' });
    // Invalid UTF-8 in the body: decoded with replacement characters and stored as such, or refused.
    const raw = Buffer.concat([Buffer.from('{"description":"bad '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
    const bad = await fx.d.get('/sessions/pi-main', { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: raw });
    expect([200, 400]).toContain(bad.status);
    if (bad.status === 200) {
      const stored = await fx.tmux.tmux('show-options', '-v', '-t', '=pi-main:', '@description');
      expect(stored).toBe(((await bad.json()) as { description: string }).description + '\n');
    }
    expect(await tmuxNames()).toContain('pi-main');
    expect(existsSync(HOSTILE_FILE)).toBe(false);
    expect((await fx.d.get('/health')).status).toBe(200);
  });

  it('a session starts in the directory asked for, hostile names included; a bad directory is a 400 naming it and creates nothing', async () => {
    const base = mkdtempSync(join(tmpdir(), 'tether-cwd-'));
    try {
      const plain = join(base, 'project');
      const hostile = join(base, `a;kill-server #{pane_id} $(touch pwned) 'q' é`);
      mkdirSync(plain);
      mkdirSync(hostile);
      for (const [name, cwd] of [
        ['in-plain', plain],
        ['in-hostile', hostile],
      ] as const) {
        const created = await json('POST', '/sessions', { name, cwd });
        expect(created.status, cwd).toBe(201);
        // The shell in the pane runs there: what `pwd` prints is the directory, byte for byte.
        expect((await json('POST', `/sessions/${name}/input`, { type: 'keys', data: 'pwd\r' })).status).toBe(204);
        await eventually(async () => (await fx.tmux.capture(`=${name}:`)).split('\n').includes(cwd), 15_000, 50, `pwd printing ${cwd}`);
        const item = ((await (await fx.d.get('/sessions')).json()) as Item[]).find((s) => s.id === name)!;
        expect(item.cwd).toBe(cwd);
      }
      // The default session records where it started too.
      expect(((await (await fx.d.get('/sessions')).json()) as Item[]).find((s) => s.id === 'pi-main')!.cwd).toMatch(/^\//);

      const file = join(base, 'a-file');
      writeFileSync(file, 'x');
      const refused: [unknown, RegExp][] = [
        ['relative/dir', /is not an absolute path/],
        [join(base, 'missing'), /does not exist/],
        [file, /is not a directory/],
        ['', /body.cwd/],
        [`${plain}\u0000x`, /NUL/],
        [42, /body.cwd/],
      ];
      const before = await tmuxNames();
      for (const [cwd, why] of refused) {
        const res = await json('POST', '/sessions', { name: 'never-made', cwd });
        expect(res.status, JSON.stringify(cwd)).toBe(400);
        const body = (await res.json()) as { error: string; message: string };
        expect(body.error).toBe('bad-request');
        expect(body.message).toMatch(why);
        if (typeof cwd === 'string' && cwd.length > 0 && !cwd.includes('\u0000')) expect(body.message).toContain(cwd);
      }
      expect(await tmuxNames()).toEqual(before);
      expect(existsSync(join(base, 'pwned')) || existsSync(join(hostile, 'pwned'))).toBe(false);
      for (const name of ['in-plain', 'in-hostile']) expect((await fx.d.get(`/sessions/${name}`, { method: 'DELETE' })).status).toBe(204);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a DELETE that arrives while the session is still being created is carried out, not dropped', async () => {
    for (const name of ['doomed-1', 'doomed-2', 'doomed-3']) {
      const created = json('POST', '/sessions', { name });
      // As soon as the daemon knows the name (it may still be creating it in tmux), delete it.
      let deleted = 404;
      await eventually(
        async () => (deleted = (await fx.d.get(`/sessions/${name}`, { method: 'DELETE' })).status) !== 404,
        15_000,
        1,
        `a DELETE of ${name} that is not a 404`,
      );
      expect(deleted).toBe(204);
      expect((await created).status).toBe(201);
      expect(await tmuxNames()).not.toContain(name);
      expect(((await (await fx.d.get('/sessions')).json()) as Item[]).map((s) => s.id)).not.toContain(name);
    }
  });

  it('input sent the moment a session is created is accepted and arrives in order (five sessions at once)', async () => {
    const names = ['burst-1', 'burst-2', 'burst-3', 'burst-4', 'burst-5'];
    // Each client creates its session and types at once, without waiting for anything: several
    // inputs in a row, over REST, while the daemon is still linking the session to fx.tmux.
    const statuses = await Promise.all(
      names.map(async (name) => {
        const created = await json('POST', '/sessions', { name });
        const answers = [created.status];
        for (const part of ['echo ', `${name}-`, 'in-', 'order'])
          answers.push((await json('POST', `/sessions/${name}/input`, { type: 'keys', data: part })).status);
        answers.push((await json('POST', `/sessions/${name}/input`, { type: 'key', name: 'enter' })).status);
        return answers;
      }),
    );
    expect(statuses).toEqual(names.map(() => [201, 204, 204, 204, 204, 204]));
    // What the user sees in each pane: the command echoed whole, and its output.
    for (const name of names) {
      await eventually(async () => (await fx.tmux.capture(`=${name}:`)).split('\n').includes(`${name}-in-order`), 15_000);
      expect(await fx.tmux.capture(`=${name}:`)).toContain(`echo ${name}-in-order`);
    }
    for (const name of names) expect((await fx.d.get(`/sessions/${name}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('fuzzed bodies on every route get 2xx or a documented 4xx with an error body; nothing breaks', async () => {
    const before = await tmuxNames();
    const bodies = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          type: fc.constantFrom('key', 'keys', 'paste', 'nope', 1),
          name: fc.oneof(fc.string(), fc.integer()),
          data: fc.oneof(fc.string(), fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
      fc.record({ description: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), x: fc.string() }, { requiredKeys: [] }),
      fc.record(
        { name: fc.oneof(fc.string(), fc.constant('fz-1')), project: fc.oneof(fc.string(), fc.array(fc.string())) },
        { requiredKeys: [] },
      ),
    );
    const routes = [
      ['POST', '/sessions'],
      ['PATCH', '/sessions/pi-main'],
      ['POST', '/sessions/pi-main/input'],
    ] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), bodies, async ([method, path], body) => {
        const res = await json(method, path, body);
        if (res.status >= 300) {
          expect(DOCUMENTED.has(res.status)).toBe(true);
          const err = (await res.json()) as { error: string; message: string };
          expect(typeof err.error).toBe('string');
          expect(typeof err.message).toBe('string');
        } else await res.arrayBuffer();
      }),
      { numRuns: 150 },
    );
    // Malformed JSON and a wrong content type.
    const malformed = await fx.d.get('/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'bad-request' });
    expect((await fx.d.get('/health')).status).toBe(200);
    for (const name of before) expect(await tmuxNames()).toContain(name);
    // 150 requests, some of which create and delete tmux sessions: long on a busy machine.
  }, 120_000);
});
