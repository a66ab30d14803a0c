/**
 * The warnings before a usage limit is hit (docs/push.md "Usage"), end to end: the built daemon,
 * an agent speaking the agent socket the way pi's extension does, and a real HTTP/2 TLS stand-in
 * for APNs with a phone paired in the background. What the phone gets: at 83 % one push naming
 * 80 % and the 5-hour window, with its reset; at 86 % none; at 96 % one, time-sensitive; once the
 * window is in a new reset period, 81 % pushes again; the weekly window's warnings are its own.
 * "Exactly one" is shown by a later push arriving behind it alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushToml, startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { fakeAgent, type FakeAgent } from '../helpers/agent-socket.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pairDevice } from '../helpers/pair-device.js';
import { eventually } from '../helpers/tmux.js';

const PHONE = 'c7'.repeat(32);
const HOUR = 3_600_000;
const WAIT_MS = 30_000;

interface UsagePush {
  title: string;
  body: string;
  timeSensitive: boolean;
  collapseId: string;
  usage: { agent: string; window: string; threshold: number; usedPercent: number; resetsAt?: string };
}

describe('usage warnings pushed at the thresholds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-usage-warnings-'));
  let apns: ApnsStandIns | null = null;
  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
  });
  const fx = useDaemon(
    () => ['[agent]', 'command = "cat"', 'default_session = "w-main"', ...pushToml(apns!.sandbox.url, apns!.keyPath), ''].join('\n'),
    { extraEnv: () => ({ NODE_EXTRA_CA_CERTS: apns!.caFile }), sessions: ['w1'] },
  );
  beforeAll(() => pairDevice(fx, 'phone', PHONE, 'sandbox'));
  afterAll(async () => {
    await apns?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const pushes = (): UsagePush[] =>
    apns!.sandbox.requests.flatMap((r) => {
      const p = r.payload as { aps: { alert: { title: string; body: string }; 'interruption-level'?: string }; usage?: UsagePush['usage'] };
      if (p.usage === undefined) return [];
      return [
        {
          title: p.aps.alert.title,
          body: p.aps.alert.body,
          timeSensitive: p.aps['interruption-level'] === 'time-sensitive',
          collapseId: String(r.headers['apns-collapse-id']),
          usage: p.usage,
        },
      ];
    });
  let agent: FakeAgent;

  it('83 %: one push naming 80 % and the 5-hour window; 86 %: none; 96 %: one, time-sensitive; a new period: 81 % again', async () => {
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=w1:', '#{pane_id}')).trim();
    agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    expect((await agent.welcomed).type).toBe('welcome');
    const reset = Date.now() + 2 * HOUR;
    const week = Date.now() + 100 * HOUR;
    const report = (five: number, fiveReset = reset, seven = 40) =>
      agent.usage([
        { name: 'five_hour', usedPercent: five, resetsAt: fiveReset },
        { name: 'seven_day', usedPercent: seven, resetsAt: week },
      ]);
    report(42);
    report(83);
    await eventually(() => pushes().length === 1, WAIT_MS, 20, 'the 80 % push');
    const first = pushes()[0]!;
    expect(first.title).toMatch(/^[\w ]+ · 80 % of the 5-hour limit used · resets \d{1,2}:\d\d (AM|PM)$/);
    expect(first.usage).toEqual({
      agent: 'pi',
      window: 'five_hour',
      threshold: 80,
      usedPercent: 83,
      resetsAt: new Date(reset).toISOString(),
    });
    expect(first.timeSensitive).toBe(false);
    report(86);
    // The weekly window crossing 80 is its own warning: it comes next, alone behind the 5-hour one.
    report(86, reset, 81);
    await eventually(() => pushes().length === 2, WAIT_MS, 20, 'the weekly 80 % push');
    expect(pushes()[1]!.usage).toMatchObject({ window: 'seven_day', threshold: 80, usedPercent: 81 });
    expect(pushes()[1]!.collapseId).not.toBe(first.collapseId);
    report(96, reset, 81);
    await eventually(() => pushes().length === 3, WAIT_MS, 20, 'the 95 % push');
    expect(pushes()[2]!.usage).toMatchObject({ window: 'five_hour', threshold: 95, usedPercent: 96 });
    expect(pushes()[2]!.timeSensitive).toBe(true);
    expect(pushes()[2]!.collapseId).toBe(first.collapseId);
    report(99, reset, 81);
    // The window's next period: it now resets five hours after the last one.
    report(81, reset + 5 * HOUR, 81);
    await eventually(() => pushes().length === 4, WAIT_MS, 20, 'the 80 % push of the new period');
    expect(pushes()[3]!.usage).toMatchObject({ window: 'five_hour', threshold: 80, usedPercent: 81 });
    expect(pushes().map((p) => `${p.usage.window}:${p.usage.threshold}`)).toEqual([
      'five_hour:80',
      'seven_day:80',
      'five_hour:95',
      'five_hour:80',
    ]);
    agent.close();
  });
});
