/**
 * The agents' usage windows against a real daemon (docs/api.md "Usage"), with an agent speaking
 * the agent socket the way pi's extension does: what it reports shows on the session (the list,
 * `GET /sessions/:id`, a `state` frame on the stream when it changes) and per account (`GET /usage`,
 * `tether status`); bad reports are clamped or left out and the daemon serves on, with no
 * NaN or null inside a window.
 */
import { describe, expect, it } from 'vitest';
import { fakeAgent, type FakeAgent } from '../helpers/agent-socket.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { runCli } from '../helpers/daemon.js';
import { stateFrames } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { AgentUsage } from '../../src/protocol/usage.js';

const TOML = `[agent]\ncommand = "cat"\ndefault_session = "u-main"\n`;
const WAIT_MS = 30_000;
const HOUR = 3_600_000;

describe('usage windows reported by an agent', () => {
  const fx = useDaemon(TOML, { sessions: ['u1', 'u2'] });
  const usageOf = async (id: string) => ((await (await fx.d.get(`/sessions/${id}`)).json()) as { usage: AgentUsage | null }).usage;
  const account = async () => (await (await fx.d.get('/usage')).json()) as AgentUsage[];
  const connect = async (session: string): Promise<FakeAgent> => {
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', `=${session}:`, '#{pane_id}')).trim();
    const agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    expect((await agent.welcomed).type).toBe('welcome');
    return agent;
  };

  it('shows on the session, on its stream, per account and in tether status', async () => {
    expect(await usageOf('u1')).toBeNull();
    expect(await account()).toEqual([]);
    const agent = await connect('u1');
    const stream = fx.mirror('u1');
    await eventually(() => stateFrames(stream).length > 0, WAIT_MS, 20, 'the first state frame');
    const five = Date.now() + 2 * HOUR;
    const week = Date.now() + 100 * HOUR;
    agent.usage([
      { name: 'five_hour', usedPercent: 72, resetsAt: five },
      { name: 'seven_day', usedPercent: 40, resetsAt: week },
    ]);
    const want = {
      windows: [
        { name: 'five_hour', usedPercent: 72, resetsAt: new Date(five).toISOString() },
        { name: 'seven_day', usedPercent: 40, resetsAt: new Date(week).toISOString() },
      ],
      binding: 'five_hour',
    };
    await eventually(async () => (await usageOf('u1')) !== null, WAIT_MS, 20, 'the usage on the session');
    expect(await usageOf('u1')).toMatchObject(want);
    const item = ((await (await fx.d.get('/sessions')).json()) as { id: string; usage: AgentUsage | null }[]).find((s) => s.id === 'u1');
    expect(item?.usage).toMatchObject(want);
    await eventually(() => stateFrames(stream).some((f) => f.usage !== undefined), WAIT_MS, 20, 'a state frame with the usage');
    expect(stateFrames(stream).at(-1)?.usage).toMatchObject(want);
    expect(await account()).toMatchObject([want]);
    // An operator on SSH sees it too.
    const status = await runCli(['status'], fx.home.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`five_hour 72 % resets ${want.windows[0]!.resetsAt} (binding)`);
    const json = JSON.parse((await runCli(['status', '--json'], fx.home.env)).stdout) as { usage: AgentUsage[] };
    expect(json.usage).toMatchObject([want]);
    // The weekly window at 100: it binds, whatever the 5-hour one says.
    agent.usage([{ name: 'seven_day', usedPercent: 100, resetsAt: week }]);
    await eventually(async () => (await usageOf('u1'))?.binding === 'seven_day', WAIT_MS, 20, 'the weekly window binding');
    expect((await usageOf('u1'))?.windows).toEqual([want.windows[0], { ...want.windows[1]!, usedPercent: 100 }]);
    agent.close();
  });

  it('clamps or leaves out bad reports, logs each kind once, and serves on: no NaN or null inside a window', async () => {
    const agent = await connect('u2');
    const reset = Date.now() + HOUR;
    agent.usage([
      { name: 'five_hour', usedPercent: null, resetsAt: reset },
      { name: 'seven_day', usedPercent: 750, resetsAt: Number.MAX_SAFE_INTEGER },
      { name: 'one_day', usedPercent: -30, resetsAt: reset },
    ]);
    agent.raw(JSON.stringify({ type: 'usage', windows: [{ name: 'x', usedPercent: 'abc', resetsAt: null }] }));
    await eventually(async () => (await usageOf('u2')) !== null, WAIT_MS, 20, 'the usage on the session');
    const usage = (await usageOf('u2'))!;
    expect(usage.windows).toEqual([
      { name: 'one_day', usedPercent: 0, resetsAt: new Date(reset).toISOString() },
      { name: 'seven_day', usedPercent: 100 },
    ]);
    const text = JSON.stringify(await (await fx.d.get('/sessions')).json());
    expect(text).not.toMatch(/NaN|"usedPercent":null|"resetsAt":null/);
    expect((await fx.d.get('/health')).status).toBe(200);
    const warned = fx.d
      .stderr()
      .split('\n')
      .filter((l) => l.includes("the agent's usage report had"));
    expect(warned.filter((l) => l.includes('not a number'))).toHaveLength(1);
    agent.close();
  });
});
