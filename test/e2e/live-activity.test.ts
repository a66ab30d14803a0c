/**
 * The Live Activity end to end through `tether serve` (docs/push.md "Live Activity"): a phone
 * paired with `tether pair` + `POST /pair` gives its Live Activity tokens over
 * `PUT /device/live-activity`; a fake `claude` (a node script that runs tether's real hook
 * program for each hook event typed into its pane, as Claude Code does) works, asks and stops;
 * a real HTTP/2 TLS stand-in for APNs checks each provider token and records what the phone
 * would get. The debounce and the idle while are shortened by the tests' environment variables.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFakeClaude } from '../helpers/fake-claude.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetClock } from '../../src/push/stop-meanings.js';
import { pushToml, type ApnsRequest } from '../../testkit/apns-server.js';
import { runCli } from '../helpers/daemon.js';
import { useApnsStandIns } from '../helpers/apns-fixture.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pairDevice, type PairedDevice } from '../helpers/pair-device.js';
import { fakeAgent } from '../helpers/agent-socket.js';
import { hookReport } from '../../testkit/agent-socket.js';
import { CLAUDE_HOOK_FIELDS, derivedClaudeFields } from '../../src/agent/claude/hook-fields.js';
import { pickHookFields } from '../../src/agent/wire/hook-wire.js';
import { eventually } from '../helpers/tmux.js';

const PHONE = 'c3'.repeat(32);
const START = 'a1'.repeat(40);
const UPDATE = 'b2'.repeat(40);
const UPDATE_2 = 'd4'.repeat(40);
const UPDATE_3 = 'e5'.repeat(40);
const UPDATE_4 = 'f6'.repeat(40);
const UPDATE_5 = '7b'.repeat(40);
const DEBOUNCE_MS = 100;
const CLAUDE_SESSION = '7a1c2a6e-3b1d-4c8e-9a7f-2d4b6c8e0a1b';
const IDLE_MS = 6000;

const work = mkdtempSync(join(tmpdir(), 'tether-activity-e2e-'));
const project = join(work, 'project');
const hookLog = join(work, 'hooks.log');
const fakeClaude = join(work, 'claude');
mkdirSync(project, { recursive: true });
// Hook inputs as Claude Code documents them; one event per typed line.
writeFakeClaude(fakeClaude, {
  sessionId: CLAUDE_SESSION,
  afterEvent: `fs.appendFileSync(${JSON.stringify(hookLog)}, hook_event_name + '\\n');`,
  events: `  prompt: () => fire('UserPromptSubmit', { prompt: 'fix the build' }),
  tool: () => fire('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 'toolu_1' }),
  permission: () => fire('PermissionRequest', { tool_name: 'Bash', tool_input: { command: 'rm -rf build' } }),
  stop: () => fire('Stop', { stop_hook_active: false }),`,
  afterLine: `fs.appendFileSync(${JSON.stringify(hookLog)}, 'done ' + line + '\\n');`,
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Aps {
  timestamp: number;
  event: 'start' | 'update' | 'end';
  'content-state': Record<string, unknown>;
  alert?: { title: string; body: string; sound?: string };
  'stale-date'?: number;
  'dismissal-date'?: number;
  'attributes-type'?: string;
  attributes?: Record<string, unknown>;
  'input-push-token'?: number;
}
const apsOf = (r: ApnsRequest): Aps => (r.payload as { aps: Aps }).aps;

describe('a Live Activity through the daemon', () => {
  let phone: PairedDevice;
  const apns = useApnsStandIns('tether-activity-apns-');
  const fx = useDaemon(
    () =>
      [
        '[agent]',
        'command = "/bin/cat"',
        '[agents.claude]',
        `command = ${JSON.stringify(fakeClaude)}`,
        ...pushToml(apns.sandbox.url, apns.keyPath, apns.production.url),
        '',
      ].join('\n'),
    {
      extraEnv: () => ({
        NODE_EXTRA_CA_CERTS: apns.caFile,
        TETHER_TEST_ACTIVITY_DEBOUNCE_MS: String(DEBOUNCE_MS),
        TETHER_TEST_ACTIVITY_IDLE_MS: String(IDLE_MS),
      }),
    },
  );
  beforeAll(async () => {
    phone = await pairDevice(fx, 'dev phone', PHONE, 'sandbox');
  }, 60_000);

  const put = (body: unknown, token: string | null = phone.token, raw?: string) =>
    fetch(`${fx.d.base}/device/live-activity`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
      body: raw ?? JSON.stringify(body),
    });
  const stored = (): unknown => {
    const file = JSON.parse(readFileSync(join(fx.home.dataDir, 'auth', 'tokens.json'), 'utf8')) as {
      tokens: { id: string; liveActivity?: unknown }[];
    };
    return file.tokens.find((t) => t.id === phone.tokenId)?.liveActivity ?? null;
  };
  const activity = () => apns.sandbox.requests.filter((r) => r.headers['apns-push-type'] === 'liveactivity');
  const hooks = () => {
    try {
      return readFileSync(hookLog, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  /** Types a line into the fake claude and waits until its hooks ran. */
  const type = async (line: string) => {
    const before = hooks().filter((l) => l === `done ${line}`).length;
    expect((await fx.json('POST', '/sessions/cc/input', { type: 'keys', data: `${line}\r` })).status).toBe(204);
    await eventually(() => hooks().filter((l) => l === `done ${line}`).length > before, 120_000, 50, `the hooks of "${line}" ran`);
  };
  /** Waits for the next push to the stand-in that `match` takes, after the `from`-th. */
  const next = async (from: number, what: string, match: (r: ApnsRequest) => boolean): Promise<ApnsRequest> => {
    const since = () =>
      activity()
        .slice(from)
        .map((r) => `${apsOf(r).event} ${JSON.stringify(apsOf(r)['content-state'])}`);
    await eventually(() => activity().slice(from).some(match), 20_000, 20, what).catch((err: unknown) => {
      throw new Error(`${String(err)}; pushes since: ${since().join(' | ')}`);
    });
    return activity().slice(from).find(match)!;
  };

  it('refuses bad tokens, wrong types, unknown keys, an empty or oversized body, no bearer, a device never registered; stores nothing', async () => {
    const refusals: [unknown, number, string | null][] = [
      [{ pushToStartToken: 'not hex!' }, 400, phone.token],
      [{ pushToStartToken: 'abc' }, 400, phone.token],
      [{ updateToken: 'ab'.repeat(300) }, 400, phone.token],
      [{ pushToStartToken: 1234 }, 400, phone.token],
      [{ updateToken: null }, 400, phone.token],
      [{ pushToStartToken: START, extra: true }, 400, phone.token],
      [{}, 400, phone.token],
      [[START], 400, phone.token],
      [{ pushToStartToken: START }, 401, null],
      [{ pushToStartToken: START }, 401, 'not-a-token'],
    ];
    for (const [body, status, token] of refusals) {
      const r = await put(body, token);
      expect(r.status, JSON.stringify(body)).toBe(status);
    }
    const huge = await put(null, phone.token, JSON.stringify({ pushToStartToken: 'ab'.repeat(600_000) }));
    expect(huge.status).toBe(413);
    // A CLI token has no device, so no APNs environment.
    const cliToken = (await runCli(['auth', 'create', 'laptop'], fx.home.env)).stdout.trim();
    const unregistered = await put({ pushToStartToken: START }, cliToken);
    expect(unregistered.status).toBe(409);
    expect(((await unregistered.json()) as { error: string }).error).toBe('device-not-registered');
    expect((await fetch(`${fx.d.base}/device/live-activity`, { method: 'DELETE' })).status).toBe(401);
    expect(stored()).toBeNull();
    expect(activity()).toEqual([]);
  });

  it('starts by push when an agent starts working; the update token replaces the start; updates at 5, an ask at 10 with an alert; ends after the idle while', async () => {
    const given = await put({ pushToStartToken: START.toUpperCase() });
    expect(given.status).toBe(200);
    expect(await given.json()).toEqual({ tokenId: phone.tokenId, pushToStartToken: true, updateToken: false });
    expect(stored()).toMatchObject({ pushToStartToken: START, updateToken: null });

    expect((await fx.json('POST', '/sessions', { name: 'cc', agent: 'claude', cwd: project })).status).toBe(201);
    await type('prompt');
    const start = await next(0, 'the start', (r) => apsOf(r).event === 'start');
    expect(start.deviceToken).toBe(START);
    expect(start.headers['apns-topic']).toBe('dev.tether.app.push-type.liveactivity');
    expect(start.headers['apns-priority']).toBe('10');
    expect(start.jwtError).toBeNull();
    const s = apsOf(start);
    expect(s['attributes-type']).toBe('TetherActivityAttributes');
    const health = (await (await fx.d.get('/health')).json()) as { id: string; name: string };
    expect(s.attributes).toEqual({ daemonId: health.id, daemonName: health.name });
    expect(s.alert).toEqual({ title: 'Claude is working', body: 'cc' });
    expect(s['input-push-token']).toBe(1);
    expect(s['content-state']).toMatchObject({
      working: 1,
      waiting: 0,
      stopped: 0,
      name: 'cc',
      agent: 'Claude',
      state: 'working',
      needsYou: false,
    });
    expect(s['stale-date']).toBe(s.timestamp + 1800);

    // The phone's new activity sends its own token: updates go there from now on.
    expect((await put({ updateToken: UPDATE })).status).toBe(200);
    const mark = activity().length;
    await type('permission');
    const ask = await next(mark, 'the ask', (r) => apsOf(r).event === 'update');
    expect(ask.deviceToken).toBe(UPDATE);
    expect(ask.headers['apns-priority']).toBe('10');
    expect(apsOf(ask)['content-state']).toMatchObject({ working: 0, waiting: 1, state: 'asking', needsYou: true, words: 'rm -rf build' });
    expect(apsOf(ask).alert).toEqual({ title: 'Claude asks you', body: 'cc: rm -rf build', sound: 'default' });

    const mark2 = activity().length;
    await type('tool');
    const working = await next(mark2, 'working again', (r) => apsOf(r).event === 'update');
    expect(working.deviceToken).toBe(UPDATE);
    expect(working.headers['apns-priority']).toBe('5');
    expect(apsOf(working).alert).toBeUndefined();
    expect(apsOf(working)['content-state']).toMatchObject({ working: 1, state: 'working', needsYou: false, words: '' });

    const mark3 = activity().length;
    await type('stop');
    const waiting = await next(mark3, 'the turn ended', (r) => apsOf(r).event === 'update');
    const quietSince = Date.now();
    expect(waiting.headers['apns-priority']).toBe('5');
    expect(apsOf(waiting)['content-state']).toMatchObject({ working: 0, waiting: 1, state: 'waiting', needsYou: false });
    const end = await next(mark3, 'the end after the idle while', (r) => apsOf(r).event === 'end');
    expect(end.deviceToken).toBe(UPDATE);
    expect(apsOf(end)['dismissal-date']).toBe(apsOf(end).timestamp + 300);
    // Not before the idle while (which began a debounce before the update that said so).
    expect(Date.now() - quietSince).toBeGreaterThanOrEqual(IDLE_MS - 1000);
    await eventually(() => (stored() as { updateToken?: unknown } | null)?.updateToken === null, 10_000, 20, 'the ended token forgotten');
    expect(stored()).toMatchObject({ pushToStartToken: START, updateToken: null });
  });

  it('a 410 for the update token forgets it; the next agent that starts working starts a new activity', async () => {
    const mark = activity().length;
    await type('prompt');
    await next(mark, 'a new start', (r) => apsOf(r).event === 'start' && r.deviceToken === START);
    expect((await put({ updateToken: UPDATE_2 })).status).toBe(200);
    apns.sandbox.answer = (r) => (r.deviceToken === UPDATE_2 ? { status: 410, reason: 'Unregistered' } : { status: 200 });
    const mark2 = activity().length;
    await type('permission');
    await next(mark2, 'the update to the dead token', (r) => r.deviceToken === UPDATE_2);
    await eventually(() => (stored() as { updateToken?: unknown }).updateToken === null, 10_000, 20, 'the dead token forgotten');
    apns.sandbox.answer = () => ({ status: 200 });
    const mark3 = activity().length;
    await type('tool');
    const again = await next(mark3, 'a start after the 410', (r) => apsOf(r).event === 'start');
    expect(again.deviceToken).toBe(START);
    expect(
      activity()
        .slice(mark3)
        .some((r) => r.deviceToken === UPDATE_2),
    ).toBe(false);
  });

  it('a usage limit: an alerting update at priority 10 with the stop, its words and its reset', async () => {
    expect((await put({ updateToken: UPDATE_4 })).status).toBe(200);
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', 'pi-main', '#{pane_id}')).trim();
    const pi = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    try {
      expect((await pi.welcomed).type).toBe('welcome');
      pi.event('agent.start');
      const resetsAt = Date.parse('2026-12-01T15:00:00Z');
      const mark = activity().length;
      // The stop ends the turn by itself (an end after it would be the turn's own `done`).
      pi.stop('usage-limit', "You've hit your limit · resets 3pm", { resetsAt, limit: 'five_hour' });
      const limit = await next(
        mark,
        'the usage limit',
        (r) => apsOf(r).event === 'update' && apsOf(r)['content-state'].state === 'stopped',
      );
      expect(limit.deviceToken).toBe(UPDATE_4);
      expect(limit.headers['apns-priority']).toBe('10');
      expect(apsOf(limit)['content-state']).toMatchObject({
        name: 'pi-main',
        state: 'stopped',
        stop: 'usage-limit',
        needsYou: true,
        words: "You've hit your limit · resets 3pm",
        resetsAt: resetsAt / 1000,
      });
      // The card's alert says the stop as its push does (src/push/stop-meanings.ts): one title per kind.
      expect(apsOf(limit).alert).toEqual({
        title: `${apsOf(limit)['content-state'].agent as string} reached its usage limit · resets ${resetClock(new Date(resetsAt).toISOString())}`,
        body: "pi-main: You've hit your limit · resets 3pm",
        sound: 'default',
      });
    } finally {
      pi.close();
    }
  });

  it('an agent that asks 100 times gets at most 12 priority-10 updates in the hour; the rest go at 5 without alert', async () => {
    expect((await put({ updateToken: UPDATE_3 })).status).toBe(200);
    const mark = activity().length;
    // The asks come as the fake claude's pane would send them: the report its hook program makes of
    // each hook input (the same fields, through the same socket), without a node process started
    // for each of the 200 hooks. Each ask stays open until the card shows it, as a person's would,
    // then the command runs (the last ask stays open).
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=cc:', '#{pane_id}')).trim();
    const hook = async (input: Record<string, unknown>) => {
      const full = { session_id: CLAUDE_SESSION, transcript_path: '/tmp/t.jsonl', cwd: project, permission_mode: 'default', ...input };
      const fields = { ...pickHookFields(full, CLAUDE_HOOK_FIELDS), ...derivedClaudeFields(full) };
      expect(await hookReport(fx.home.dataDir, 'claude', pane, fx.tmux.socket, fields)).toEqual({ type: 'ok' });
    };
    for (let i = 0; i < 100; i++) {
      const command = `make step-${i}`;
      const before = activity().length;
      await hook({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command } });
      await next(before, `the card showing ask ${i}`, (r) => (apsOf(r)['content-state'] as { words?: string }).words === command);
      if (i < 99) await hook({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: `toolu_${i}` });
    }
    const urgent = activity().filter((r) => r.headers['apns-priority'] === '10' && apsOf(r).event === 'update');
    expect(urgent.length).toBe(12);
    // The budget is the hour's: the usage limit and the asks before took their share of it.
    const limitTitle = `pi reached its usage limit · resets ${resetClock('2026-12-01T15:00:00.000Z')}`;
    for (const r of urgent) expect(['Claude asks you', limitTitle]).toContain(apsOf(r).alert?.title);
    expect(urgent.filter((r) => apsOf(r).alert?.title === 'Claude asks you').length).toBe(11);
    const asking = activity()
      .slice(mark)
      .filter((r) => (apsOf(r)['content-state'] as { state: string }).state === 'asking');
    // Every ask reached the card, far more than the budget allows alerts for.
    expect(new Set(asking.map((r) => (apsOf(r)['content-state'] as { words?: string }).words)).size).toBe(100);
    const late = asking.filter((r) => r.headers['apns-priority'] === '5');
    expect(late.length).toBeGreaterThan(0);
    for (const r of late) expect(apsOf(r).alert).toBeUndefined();
  }, 300_000);

  it('DELETE ends the running activity at once and forgets both tokens', async () => {
    // Running and working, whether or not the idle while ended the last one meanwhile.
    expect((await put({ updateToken: UPDATE_3 })).status).toBe(200);
    const working = activity().length;
    await type('tool');
    await next(working, 'working', (x) => x.deviceToken === UPDATE_3 && (apsOf(x)['content-state'] as { working: number }).working === 1);
    const mark = activity().length;
    const r = await fetch(`${fx.d.base}/device/live-activity`, { method: 'DELETE', headers: { authorization: `Bearer ${phone.token}` } });
    expect(r.status).toBe(200);
    const end = await next(mark, 'the end', (x) => apsOf(x).event === 'end');
    expect(end.deviceToken).toBe(UPDATE_3);
    expect(apsOf(end)['dismissal-date']).toBe(apsOf(end).timestamp);
    expect(stored()).toBeNull();
  });

  it('a revoked phone gets no more pushes; another phone goes on getting its own', async () => {
    const other = await pairDevice(fx, 'release phone', 'f0'.repeat(32), 'sandbox');
    const WITNESS = '9a'.repeat(40);
    expect((await put({ updateToken: UPDATE_5 })).status).toBe(200);
    expect((await put({ updateToken: WITNESS }, other.token)).status).toBe(200);
    // Both activities get the card as it is (their content is unknown to the daemon).
    await next(0, 'the first update to each', (r) => r.deviceToken === UPDATE_5);
    await next(0, 'the witness', (r) => r.deviceToken === WITNESS);
    await runCli(['auth', 'revoke', phone.tokenId], fx.home.env);
    const mark = activity().length;
    await type('stop');
    await next(mark, 'the change at the witness', (r) => r.deviceToken === WITNESS);
    expect(
      activity()
        .slice(mark)
        .some((r) => r.deviceToken === UPDATE_5),
    ).toBe(false);
  });

  it('every push: timestamps strictly increasing, under 4 KB, a stale date on each start and update', () => {
    const all = activity();
    expect(all.length).toBeGreaterThan(40);
    // Per device: the first phone's tokens (the witness phone has its own clock of timestamps).
    const stamps = all.filter((r) => r.deviceToken !== '9a'.repeat(40)).map((r) => apsOf(r).timestamp);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]!).toBeGreaterThan(stamps[i - 1]!);
    for (const r of all) {
      expect(r.body.length).toBeLessThanOrEqual(4096);
      expect(r.jwtError).toBeNull();
      if (apsOf(r).event !== 'end') expect(apsOf(r)['stale-date']).toBe(apsOf(r).timestamp + 1800);
    }
    expect(apns.production.requests).toEqual([]);
  });
});
