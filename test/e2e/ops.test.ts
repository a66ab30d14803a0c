/**
 * The operator view in a real headless Chromium: `tether serve` (the built CLI) on a private
 * tmux server, `/ops?token=...` opened in the Debian chromium through playwright-core. What an
 * operator sees: the actor tree with the session and its diagram (and the disk buffer's), the
 * current state highlighted, and the highlight moving as the agent reports over its socket and as the pane
 * exits; a stream client appearing under its session. Screenshots go to test-artifacts/ops/.
 * Without a token every ops route is a 401.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fakeAgent, type FakeAgent } from '../helpers/agent-socket.js';
import { daemonHome, ROOT, runCli } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts/ops');
/** The browser on two shared cores: generous waits, never sleeps. */
const UI_MS = 45_000;

const card = (actor: string) => `section.card[data-actor="${actor}"]`;

/** The chart nodes highlighted in an actor's card, by state id. */
async function highlighted(page: Page, actor: string): Promise<string[]> {
  const nodes = page.locator(`${card(actor)} .chart g.node.active`);
  const out: string[] = [];
  for (let i = 0, n = await nodes.count(); i < n; i++) out.push((await nodes.nth(i).getAttribute('data-state')) ?? '');
  return out;
}

async function waitHighlighted(page: Page, actor: string, stateId: string): Promise<void> {
  await page.locator(`${card(actor)} .chart g.node.active[data-state="${stateId}"]`).waitFor({ state: 'attached', timeout: UI_MS });
}

describe('/ops in a real browser', () => {
  // The agent ends at ctrl-d with status 0. Not cat: GNU cat closes its terminal (fds 0, 1 and 2)
  // before it exits, tmux then closes the pane's pty, and the hang-up can kill cat first ("killed
  // by SIGHUP" on a busy host; docs/testing.md "The ops failure, explained").
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh -c 'read -r line; exit 0'"\n`);
  let browser: Browser;
  let page: Page;
  let agent: FakeAgent | undefined;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  }, 60_000);

  // Registered after the fixture: the agent and the browser go before the daemon.
  afterAll(async () => {
    agent?.close();
    await browser?.close();
  });

  it('without a token, every ops route is 401 (the page, a chart, the actor list, the event socket)', async () => {
    for (const path of ['/ops', '/ops/charts/session.svg', '/ops/actors']) {
      const r = await fetch(fx.d.base + path);
      expect(r.status, path).toBe(401);
      expect(await r.json()).toMatchObject({ error: 'unauthorized' });
    }
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/ops/events`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    const wrong = await fetch(`${fx.d.base}/ops?token=not-a-token`);
    expect(wrong.status).toBe(401);
  });

  it('a viewer of /ops/events gets the tree, and is closed with 4401 when its token is revoked', { timeout: 60_000 }, async () => {
    const created = await runCli(['auth', 'create', 'ops-viewer'], fx.home.env);
    expect(created.code, created.stderr).toBe(0);
    const viewerToken = created.stdout.trim();
    const ws = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/ops/events?token=${encodeURIComponent(viewerToken)}`);
    const first = await new Promise<{ type: string; actors?: { id: string }[] }[]>((resolve, reject) => {
      ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as { type: string }[]));
      ws.once('error', reject);
    });
    expect(first[0]?.type).toBe('actors');
    expect(first[0]?.actors?.map((a) => a.id)).toEqual(expect.arrayContaining(['sidecar', 'session:pi-main']));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    expect((await runCli(['auth', 'revoke', 'ops-viewer'], fx.home.env)).code).toBe(0);
    expect(await closed).toBe(4401);
  });

  it('shows the actor tree and the session diagram with its state highlighted, and the highlight moves', { timeout: 240_000 }, async () => {
    const response = await page.goto(`${fx.d.base}/ops?token=${encodeURIComponent(fx.d.token)}`);
    expect(response?.status()).toBe(200);
    // The token leaves the address bar once the page has it.
    expect(page.url()).not.toContain(fx.d.token);

    // The tree: the sidecar at the root, the session under it, discovery as a subsystem.
    await page.waitForSelector('#tree li[data-actor="sidecar"] li[data-actor="session:pi-main"]', { timeout: UI_MS });
    await page.waitForSelector('#tree li[data-actor="sidecar"] li[data-actor="discovery"]', { timeout: UI_MS });
    await page.waitForSelector(`${card('session:pi-main')} .chart svg`, { timeout: UI_MS });
    await waitHighlighted(page, 'session:pi-main', 'session.running.pane.alive');
    expect(await highlighted(page, 'session:pi-main')).not.toContain('session.running.pane.exited');
    await waitHighlighted(page, 'sidecar', 'sidecar.serving.tmux.up');
    // The disk buffer: the global watchdog under the sidecar, one buffer per session.
    await waitHighlighted(page, 'diskBuffer', 'diskBuffer.writing');
    await waitHighlighted(page, 'session:pi-main/buffer', 'diskBuffer.writing');
    // The subsystems from /health.
    await page.waitForSelector('#subsystems [data-subsystem="watchdog"]', { timeout: UI_MS });
    expect(await page.textContent('#subsystems [data-subsystem="status"]')).toContain('ok');
    await shot('1-session-running');

    // A phone connects: its client actor appears under the session and goes live.
    const phone = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/sessions/pi-main/stream?token=${encodeURIComponent(fx.d.token)}`);
    await new Promise((resolve, reject) => {
      phone.once('open', resolve);
      phone.once('error', reject);
    });
    phone.send(JSON.stringify({ type: 'resume', lastSeq: null }));
    await page.waitForSelector('#tree li[data-actor="session:pi-main"] li[data-actor="session:pi-main/client#1"]', { timeout: UI_MS });
    await waitHighlighted(page, 'session:pi-main/client#1', 'streamClient.live');
    await shot('2-client-live');

    // The agent reports over its socket: the agent's diagram follows it.
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', 'pi-main', '#{pane_id}')).trim();
    agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    expect((await agent.welcomed).type).toBe('welcome');
    await waitHighlighted(page, 'session:pi-main/agent', 'agentState.reporting.idle');
    agent.event('agent.start');
    await waitHighlighted(page, 'session:pi-main/agent', 'agentState.reporting.thinking');
    expect(await highlighted(page, 'session:pi-main/agent')).not.toContain('agentState.reporting.idle');
    await shot('3-agent-thinking');
    agent.event('agent.end', { idle: true });
    // awaiting-input is waiting for a prompt (no ask): its inner state is the one highlighted.
    await waitHighlighted(page, 'session:pi-main/agent', 'agentState.reporting.awaiting-input.waiting');
    // Its recent events are listed on its card.
    await page
      .locator(`${card('session:pi-main/agent')} .events li`, { hasText: 'agent.end' })
      .first()
      .waitFor({ timeout: UI_MS });
    await shot('4-agent-awaiting-input');

    // Input that ends the agent (ctrl-d to its read): the session's pane exits and the highlight moves.
    const r = await fx.d.get('/sessions/pi-main/input', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'key', name: 'ctrl-d' }),
    });
    expect(r.status).toBe(204);
    await waitHighlighted(page, 'session:pi-main', 'session.running.pane.exited');
    expect(await highlighted(page, 'session:pi-main')).not.toContain('session.running.pane.alive');
    // The agent's process ended: its agent actor holds the exited stop, and the page lists it.
    await waitHighlighted(page, 'session:pi-main/agent', 'agentState.exited');
    const stopped = page.locator('#stop-list li[data-stop="exited"]');
    await stopped.waitFor({ timeout: UI_MS });
    expect(await stopped.textContent()).toMatch(/^pi-main {2}\S+ exited {2}\S+: exited with status 0$/);
    // Its client stays with the exited session (it shows the last screen); closed, it leaves the tree.
    expect(await page.locator('#tree li[data-actor="session:pi-main/client#1"]').count()).toBe(1);
    await shot('5-pane-exited');
    phone.close();
    await page.locator('#tree li[data-actor="session:pi-main/client#1"]').waitFor({ state: 'detached', timeout: UI_MS });
  });

  it('the actor list as JSON, with the token', async () => {
    const r = await fx.d.get('/ops/actors');
    expect(r.status).toBe(200);
    const { actors } = (await r.json()) as { actors: { id: string; machine: string | null; active: string[] }[] };
    const session = actors.find((a) => a.id === 'session:pi-main');
    expect(session?.machine).toBe('session');
    expect(session?.active).toContain('session.running.pane.exited');
  });

  it('tether status shows the same picture in the terminal: health, sessions with agent state and clients, the actor tree', async () => {
    const { code, stdout, stderr } = await runCli(['status'], fx.home.env);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^tether \S+ \(.+\): ok, up /);
    expect(stdout).toMatch(/buffer: writing, [\d.]+ MB, [\d.]+ GB free\s+push: off\s+tls: off\s+clients: 0/);
    const row = stdout.split('\n').find((l) => l.startsWith('pi-main '));
    // The agent's process ended (ctrl-d): no agent state, its exited stop instead.
    expect(row?.split(/\s+/).slice(0, 4)).toEqual(['pi-main', 'exited', '-', '0']);
    expect(stdout).toMatch(/^STOPS\npi-main: \S+ exited at \S+: exited with status 0$/m);
    expect(stdout).toMatch(/^sidecar\s+sidecar\s+serving\.tmux\.up$/m);
    expect(stdout).toMatch(/^ {2}session:pi-main\s+session\s+running\.link\.attached\.live, running\.pane\.exited$/m);
    expect(stdout).toMatch(/^ {4}session:pi-main\/agent\s+agentState\s+exited$/m);
    const json = JSON.parse((await runCli(['status', '--json'], fx.home.env)).stdout) as {
      health: { status: string };
      sessions: { id: string; agentState: string | null; stop: { kind: string; exitCode?: number } | null }[];
    };
    expect(json.health.status).toBe('ok');
    expect(json.sessions.map((x) => [x.id, x.agentState, x.stop?.kind, x.stop?.exitCode])).toEqual([['pi-main', null, 'exited', 0]]);
  });

  it('shows the last answers to what agents asked: on the page, in /ops/answers and in tether status', { timeout: 120_000 }, async () => {
    // The answer log as the daemon writes it (what puts the real answers there, with the real
    // agents, is test/e2e/asks-claude.test.ts); the page and the status read it back.
    const entry = {
      at: '2026-11-26T09:30:02.114Z',
      session: 'pi-main',
      agent: 'claude',
      ask: '0f6c3a8e-6a43-4d0b-9d0e-5a3c2b1f7e21',
      kind: 'permission',
      tool: 'Bash',
      concern: 'rm -rf build',
      choice: 'no',
      label: 'No, and tell Claude what to do differently',
      by: 'my-phone',
      landed: false,
    };
    writeFileSync(join(fx.home.dataDir, 'answers.log'), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    const r = await fx.d.get('/ops/answers');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ answers: [entry] });
    await page.goto(`${fx.d.base}/ops?token=${encodeURIComponent(fx.d.token)}`);
    const item = page.locator(`#answer-list li[data-ask="${entry.ask}"]`);
    await item.waitFor({ state: 'attached', timeout: UI_MS });
    const text = (await item.textContent()) ?? '';
    for (const part of ['pi-main', 'claude permission Bash: rm -rf build', 'No, and tell Claude', 'by my-phone', '(not seen taken)'])
      expect(text).toContain(part);
    await shot('6-answers');
    const { stdout } = await runCli(['status'], fx.home.env);
    expect(stdout).toMatch(/^ANSWERS$/m);
    expect(stdout).toMatch(/pi-main\s+claude permission Bash: rm -rf build\s+No, and tell Claude what to do differently\s+my-phone\s+no/);
    const json = JSON.parse((await runCli(['status', '--json'], fx.home.env)).stdout) as { answers: unknown[] };
    expect(json.answers).toEqual([entry]);
  });

  describe('over https', () => {
    const tlsFx = useDaemon('tls = true\n[agent]\ncommand = "/bin/cat"\n', { startTimeoutMs: 60_000, setupTimeoutMs: 90_000 });

    it(
      'tether status talks to a daemon serving https, pinning its certificate; the page works over https and wss',
      { timeout: 120_000 },
      async () => {
        const tlsDaemon = tlsFx.d;
        expect(tlsDaemon.url.protocol).toBe('https:');
        const { code, stdout, stderr } = await runCli(['status'], tlsFx.home.env);
        expect(stderr).toBe('');
        expect(code).toBe(0);
        expect(stdout).toMatch(/tls: on/);
        expect(
          stdout
            .split('\n')
            .find((l) => l.startsWith('pi-main '))
            ?.split(/\s+/)
            .slice(0, 2),
        ).toEqual(['pi-main', 'running']);
        // The page over https: its live updates come over wss, allowed by its own CSP.
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        try {
          const tlsPage = await context.newPage();
          await tlsPage.goto(`${tlsDaemon.base}/ops?token=${encodeURIComponent(tlsDaemon.token)}`);
          await waitHighlighted(tlsPage, 'session:pi-main', 'session.running.pane.alive');
          expect(await tlsPage.textContent('#conn')).toBe('live');
        } finally {
          await context.close();
        }
      },
    );
  });

  it('tether status without a running daemon says so and exits 1', async () => {
    const idle = daemonHome(fx.tmux.socket);
    try {
      const { code, stdout, stderr } = await runCli(['status'], idle.env);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toBe('tether: tether is not running (no live daemon in the run file): start it with "tether serve"\n');
    } finally {
      idle.cleanup();
    }
  });
});
