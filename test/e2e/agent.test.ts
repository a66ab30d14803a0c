/**
 * The real agent end to end: `tether serve` (the built CLI) on a private tmux server creates
 * its default session running the real pi with the tether extension, driven by a local fake
 * model. What a phone would see: the agent's states in order with the turn's terminal bytes,
 * the slash commands, the session's automatic name, and nothing broken when pi is killed.
 * Then `pi --tether` started by a person in their own tmux session, with no daemon running.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_SOCKET_ENV } from '../../src/agent/wire/extension-channel.js';
import { agentSocketPath } from '../../src/agent/wire/socket-path.js';
import { SessionRecords } from '../../src/restore/records.js';
import { resolvePaths } from '../../src/config/paths.js';
import { daemonHome, ROOT, type DaemonHome } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { useFakePi } from '../helpers/fake-pi-fixture.js';
import { lastOfRole, messageText, type startFakeModel } from '../helpers/fake-model.js';
import { FAKE_NAMING_MODEL, FAKE_PROVIDER } from '../helpers/pi-home.js';
import { Mirror } from '../helpers/stream.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** pi starts slowly on two shared cores: waits are generous, never sleeps. */
const PI_START_MS = 60_000;
const TURN_MS = 45_000;
const PI_CLI = join(ROOT, 'node_modules/@mariozechner/pi-coding-agent/dist/cli.js');
const EXTENSION = join(ROOT, 'dist/extension/index.js');

/** The fake model: a tool call when asked for one, a title for the naming model, else text. */
function script(req: Parameters<Parameters<typeof startFakeModel>[0]>[0]) {
  if (req.model === FAKE_NAMING_MODEL) return { text: '"Tool Check Session."' };
  const last = req.messages[req.messages.length - 1];
  if (last?.role === 'tool') return { text: 'The tool ran fine.' };
  const asked = messageText(lastOfRole(req, 'user'));
  if (asked.includes('use a tool')) return { toolCalls: [{ name: 'bash', arguments: { command: 'echo hello-from-$((6*7))' } }] };
  return { text: `You said: ${asked.slice(0, 40)}` };
}

const TEST_EXTENSION = `export default function (pi) {
  pi.registerCommand('hello-cmd', { description: 'Say hello from a test extension', handler: async () => {} });
}
`;

describe('the real agent in tether sessions', () => {
  // Before the daemon, whose environment names them: they go after it.
  const fp = useFakePi(script, (pi) => {
    pi.addPromptTemplate('greet', 'Greet someone warmly', 'Say hello to $1');
    pi.addExtension('hello-ext', TEST_EXTENSION);
  });
  const fx = useDaemon(`[agent]\ndefault_session = "pi-main"\nnaming_model = "${FAKE_PROVIDER}/${FAKE_NAMING_MODEL}"\n`, {
    extraEnv: () => fp.pi.env,
    startTimeoutMs: 30_000,
    setupTimeoutMs: 60_000,
  });
  const json = async <T>(path: string, init?: RequestInit): Promise<T> => (await (await fx.d.get(path, init)).json()) as T;
  const list = () => json<{ id: string; description: string; agentState: string | null }[]>('/sessions');
  const item = async (id: string) => (await list()).find((s) => s.id === id);
  const type = async (id: string, text: string) => {
    const post = (body: unknown) =>
      fx.d.get(`/sessions/${id}/input`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ type: 'keys', data: text })).status).toBe(204);
    expect((await post({ type: 'key', name: 'enter' })).status).toBe(204);
  };
  /** Types a prompt once the agent waits; resolves when the model got it and the agent waits again. */
  const turn = async (id: string, text: string) => {
    await eventually(async () => ['idle', 'awaiting-input'].includes((await item(id))?.agentState ?? ''), PI_START_MS, 100);
    const seen = fp.model.requests.length;
    await type(id, text);
    await eventually(() => fp.model.requests.slice(seen).some((r) => messageText(lastOfRole(r, 'user')) === text), TURN_MS, 50);
    await eventually(async () => (await item(id))?.agentState === 'awaiting-input', TURN_MS, 100);
  };

  it(
    'a typed prompt: thinking, tool (bash), then awaiting-input, in order, with the terminal bytes of the turn',
    { timeout: 180_000 },
    async () => {
      await eventually(async () => (await item('pi-main'))?.agentState === 'idle', PI_START_MS, 200);
      const mirror = new Mirror(fx.d.base, fx.d.token, 'pi-main').connect();
      try {
        await eventually(() => mirror.kinds().includes('state'), 15_000);
        await type('pi-main', 'please use a tool');
        const states = () => mirror.received.flatMap((r) => (r.kind === 'state' ? [r.frame] : []));
        await eventually(() => states().some((s) => s.value === 'awaiting-input'), TURN_MS, 50);
        const values = states().map((s) => (s.tool ? `${s.value}:${s.tool}` : s.value));
        expect(values[0]).toBe('idle');
        const from = values.indexOf('thinking');
        expect(values.slice(from)).toEqual(['thinking', 'tool:bash', 'thinking', 'awaiting-input']);
        for (const s of states()) expect(Math.abs(s.ts - Date.now())).toBeLessThan(120_000);
        await eventually(
          async () => (await mirror.text()).includes('hello-from-42') && (await mirror.text()).includes('The tool ran fine.'),
          15_000,
        );
        expect((await item('pi-main'))?.agentState).toBe('awaiting-input');
      } finally {
        mirror.close();
      }
    },
  );

  it('lists the slash commands of pi, a test extension and a prompt template', { timeout: 60_000 }, async () => {
    const names = async () => (await json<{ name: string; description: string }[]>('/sessions/pi-main/commands')).map((c) => c.name);
    await eventually(async () => (await names()).includes('hello-cmd'), PI_START_MS, 200);
    const commands = await json<{ name: string; description: string }[]>('/sessions/pi-main/commands');
    expect(commands).toContainEqual({ name: 'hello-cmd', description: 'Say hello from a test extension' });
    expect(commands).toContainEqual({ name: 'greet', description: 'Greet someone warmly' });
    expect(commands.map((c) => c.name)).toContain('model');
    expect(new Set(commands.map((c) => c.name)).size).toBe(commands.length);
  });

  it('names the session after three messages; a manual description set first prevents it', { timeout: 240_000 }, async () => {
    const created = await fx.d.get('/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'manual' }),
    });
    expect(created.status).toBe(201);
    const patched = await fx.d.get('/sessions/manual', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'My own title' }),
    });
    expect(patched.status).toBe(200);

    expect((await item('pi-main'))?.description).toBe('');
    await turn('pi-main', 'second message');
    expect((await item('pi-main'))?.description).toBe('');
    await turn('pi-main', 'third message');
    // The naming call starts pi's CLI once more: on two busy cores that alone can take half a minute.
    await eventually(
      async () => (await item('pi-main'))?.description === 'Tool Check Session',
      120_000,
      100,
      'the description the naming call chose',
    );
    const namingCalls = fp.model.requests.filter((r) => r.model === FAKE_NAMING_MODEL);
    expect(namingCalls).toHaveLength(1);
    expect(messageText(lastOfRole(namingCalls[0]!, 'user'))).toMatch(/please use a tool[\s\S]*second message[\s\S]*third message/);

    for (const m of ['one', 'two', 'three']) await turn('manual', m);
    await eventually(
      () => /"session":"manual"[^\n]*auto-naming skipped/.test(fx.d.stderr()),
      60_000,
      100,
      'auto-naming skipped for "manual"',
    );
    expect(fp.model.requests.filter((r) => r.model === FAKE_NAMING_MODEL)).toHaveLength(1);
    expect((await item('manual'))?.description).toBe('My own title');
  });

  it(
    "keeps reporting across pi's /reload and /new (the extension starts again); the record follows pi's conversation file",
    { timeout: 120_000 },
    async () => {
      const records = new SessionRecords(fx.home.dataDir);
      const fileOf = () => records.read('manual')?.sessionFile ?? null;
      // pi keeps the conversation in a file of its own; the session's record names it.
      await eventually(() => fileOf() !== null && existsSync(fileOf()!), 15_000, 50, "pi's conversation file in the record");
      const before = fileOf()!;
      for (const command of ['/reload', '/new']) {
        await eventually(async () => (await item('manual'))?.agentState === 'awaiting-input', TURN_MS, 100);
        await type('manual', command);
        await eventually(async () => (await item('manual'))?.agentState === 'idle', TURN_MS, 100);
        await turn('manual', `hello after ${command}`);
        const names = (await json<{ name: string }[]>('/sessions/manual/commands')).map((c) => c.name);
        expect(names).toContain('hello-cmd');
        if (command === '/reload') expect(fileOf()).toBe(before);
      }
      // /new starts another conversation, in another file: the record moved with it.
      await eventually(() => fileOf() !== before && existsSync(fileOf()!), 15_000, 50, "the record naming /new's conversation file");
      expect(readFileSync(fileOf()!, 'utf8')).toContain('hello after /new');
    },
  );

  it('pi killed with SIGTERM: the daemon notices, state frames stop, nothing crashes', { timeout: 60_000 }, async () => {
    const mirror = new Mirror(fx.d.base, fx.d.token, 'pi-main').connect();
    try {
      await eventually(() => mirror.kinds().includes('state'), 15_000);
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '-t', '=pi-main:', '#{pane_pid}')).trim());
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, 'SIGTERM');
      await eventually(async () => (await item('pi-main'))?.agentState === null, 20_000, 100);
      const statesAfter = mirror.received.filter((r) => r.kind === 'state').length;
      expect((await fx.d.get('/health')).status).toBe(200);
      expect(await item('manual')).toMatchObject({ agentState: 'awaiting-input' });
      expect(mirror.received.filter((r) => r.kind === 'state').length).toBe(statesAfter);
      expect(fx.d.child.exitCode).toBeNull();
    } finally {
      mirror.close();
    }
  });

  it(
    'pi respawned after it died: the same pane runs pi with its extension again, and a client that stayed sees it work',
    { timeout: 180_000 },
    async () => {
      const mirror = new Mirror(fx.d.base, fx.d.token, 'pi-main').connect();
      const meta = (state: string) => mirror.received.some((r) => r.kind === 'meta' && r.frame.state === state);
      try {
        await eventually(() => meta('exited'), 15_000);
        const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=pi-main:', '#{pane_id}')).trim();
        const res = await fx.d.get('/sessions/pi-main/respawn', { method: 'POST' });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ id: 'pi-main', state: 'running' });
        expect((await fx.tmux.tmux('display-message', '-p', '-t', '=pi-main:', '#{pane_id} #{pane_dead}')).trim()).toBe(`${pane} 0`);
        await eventually(() => meta('running'), 15_000);
        // pi came back with the tether extension and its socket: it reports, and a turn works.
        const statesBefore = mirror.received.filter((r) => r.kind === 'state').length;
        await turn('pi-main', 'hello after the respawn');
        expect(mirror.received.filter((r) => r.kind === 'state').length).toBeGreaterThan(statesBefore);
        await eventually(async () => (await mirror.text()).includes('You said: hello after the respawn'), TURN_MS, 100);
        expect(mirror.stream.status).toBe('open');
      } finally {
        mirror.close();
      }
    },
  );
});

describe('pi --tether started by a person in their own tmux session', () => {
  const fp = useFakePi(script);
  let tmux: PrivateTmux;
  let home: DaemonHome;

  beforeAll(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, '', fp.pi.env);
  });

  afterAll(async () => {
    // The daemon was started by pi (inside this test's tmux): stop exactly that process, found
    // by the unique data dir in its environment.
    for (const pid of daemonsOf(home.dataDir)) process.kill(pid, 'SIGTERM');
    await eventually(() => daemonsOf(home.dataDir).length === 0, 15_000).catch(() => undefined);
    await tmux?.cleanup();
    home?.cleanup();
  });

  it('makes the session a tether session, starts the daemon and shows the URL', { timeout: 120_000 }, async () => {
    const env = Object.entries({ ...fp.pi.env, TETHER_CONFIG: home.configFile, TETHER_DATA_DIR: home.dataDir }).flatMap(([k, v]) => [
      '-e',
      `${k}=${v}`,
    ]);
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'mine',
      '-x',
      '120',
      '-y',
      '40',
      ...env,
      '--',
      process.execPath,
      PI_CLI,
      '-e',
      EXTENSION,
      '--tether',
    );
    const outFile = join(home.dataDir, 'run', 'serve.out');
    // The daemon's stdout (the URL line) and stderr (logs) share this file.
    const url: string = await eventually(
      () => /^http:\/\/\S+\?token=\S+$/m.exec(readFileSync(outFile, 'utf8'))?.[0] ?? '',
      PI_START_MS,
      200,
    );
    const base = new URL(url);
    const token = base.searchParams.get('token')!;
    const get = (path: string) => fetch(`${base.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await eventually(
      async () => {
        const sessions = (await (await get('/sessions')).json()) as { id: string; agentState: string | null }[];
        return sessions.length === 1 && sessions[0]!.id === 'mine' && sessions[0]!.agentState === 'idle';
      },
      PI_START_MS,
      200,
    );
    expect((await tmux.tmux('show-options', '-v', '-t', '=mine:', '@tether-pane')).trim()).toBe(
      (await tmux.tmux('display-message', '-p', '-t', '=mine:', '#{pane_id}')).trim(),
    );
    await eventually(async () => (await tmux.capture('=mine:')).replace(/\n/g, '').includes(url.slice(0, 40)), 20_000, 200);
    expect(agentSocketPath(resolvePaths(home.env).runDir)).toMatch(/agent\.sock$/);
  });

  it('a pi that tether started waits for its daemon (restarting) and starts none of its own', { timeout: 120_000 }, async () => {
    // As tether launches pi: the agent socket named in the environment, nobody listening there yet.
    const dataDir = join(home.dir, 'restarting');
    const socketPath = join(dataDir, 'run', 'agent.sock');
    mkdirSync(dirname(socketPath), { recursive: true });
    const env = Object.entries({
      ...fp.pi.env,
      TETHER_CONFIG: home.configFile,
      TETHER_DATA_DIR: dataDir,
      [AGENT_SOCKET_ENV]: socketPath,
    }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await tmux.tmux('new-session', '-d', '-s', 'launched', ...env, '--', process.execPath, PI_CLI, '-e', EXTENSION, '--tether');
    // Once pi is up (its first look for the daemon failed), the daemon "comes back": pi's hello arrives.
    await eventually(async () => (await tmux.capture('=launched:')).includes('fake-agent'), PI_START_MS, 200, "pi's screen");
    const hello = new Promise<string>((resolveHello) => {
      const server = createServer((conn) =>
        conn.once('data', (d: Buffer) => {
          resolveHello(d.toString('utf8'));
          conn.destroy();
          server.close();
        }),
      );
      server.listen(socketPath);
    });
    expect(JSON.parse((await hello).split('\n')[0]!)).toMatchObject({ type: 'hello' });
    expect(daemonsOf(dataDir)).toEqual([]);
    expect(existsSync(join(dataDir, 'run', 'serve.out'))).toBe(false);
  });
});

/** Pids of `tether serve` processes whose environment names this data dir (Linux /proc). */
function daemonsOf(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmd.some((a) => a.endsWith('dist/cli/main.js')) || !cmd.includes('serve')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`TETHER_DATA_DIR=${dataDir}`)) pids.push(Number(entry));
    } catch {
      // The process ended meanwhile, or is not ours to read.
    }
  }
  return pids;
}
