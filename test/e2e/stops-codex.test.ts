/**
 * Codex stopping for something else than the end of its turn (docs/api.md "Stops",
 * docs/agents.md "Stops"), with the real Codex 0.169 against the fake Responses server answering
 * as the real service does, the built daemon, a phone paired to the HTTP/2 TLS stand-in for APNs
 * (in the background), and a stream client watching the session.
 *
 * One daemon and one Codex session: an API error it gives up on (a 500; its retries are off in
 * the test's config), then a usage limit (a 429 whose body is the service's
 * `usage_limit_reached` error with its `resets_at`, and the `x-codex-primary-*` and
 * `x-codex-secondary-*` headers, answered to the API key of a configured provider), then the
 * agent killed by a signal. Each: the stop on the stream and in the list within 2 s of the agent
 * showing it, and one push. The usage limit comes after the error: once the limit's dialog was
 * closed, the next prompt typed at once was not sent (not yet understood).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AGENT_ENV_CLEARED } from '../../testkit/agent-bins.js';
import { startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { codexHome, type CodexHome } from '../../testkit/codex-home.js';
import { startFakeResponses, toolNames, type FakeResponses, type ResponsesReply } from '../../testkit/fake-responses.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { explainedBy } from '../helpers/daemon.js';
import { pairDevice } from '../helpers/pair-device.js';
import { shows as showsOn, stateFrames, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { StateFrame, Stop } from '../../src/protocol/frames.js';

/** A cold start of Codex on a busy two-core machine. */
const AGENT_START_MS = 90_000;
const TURN_MS = 90_000;
const TEST_MS = 240_000;
const POLL_MS = 50;
/** The bound of the issue: the stop is on the stream and in the list within 2 s of the agent showing it. */
const STOP_SEEN_MS = 2000;
const PHONE = 'd8'.repeat(32);

/** How the fake answers the agent's next turn. */
type Mode = 'ok' | 'usage-limit' | 'error';

describe('Codex stops: an API error, a usage limit, a signal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-stops-codex-'));
  let apns: ApnsStandIns;
  let responses: FakeResponses;
  let codex: CodexHome;
  let m: Mirror;
  let mode: Mode = 'ok';
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = Math.ceil(Date.now() / 60_000) * 60 + 3 * 3600;
  const env: NodeJS.ProcessEnv = {};
  /** When each stop first came on a state frame (by stop id). */
  const stopSeenAt = new Map<string, number>();

  const reply = (): ResponsesReply => {
    if (mode === 'usage-limit') {
      // The service's answer at a usage limit: its error body, and the windows in its headers.
      return {
        status: 429,
        headers: {
          'x-codex-primary-used-percent': '100.0',
          'x-codex-primary-window-minutes': '300',
          'x-codex-primary-reset-at': String(reset),
          'x-codex-secondary-used-percent': '40.0',
          'x-codex-secondary-window-minutes': '10080',
          'x-codex-secondary-reset-at': String(reset + 86_400),
        },
        errorBody: {
          error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset },
        },
      };
    }
    if (mode === 'error')
      return { status: 500, errorBody: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } };
    return { text: 'All done.' };
  };

  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
    responses = await startFakeResponses((req) => (toolNames(req).length > 0 ? reply() : { text: 'Title' }));
    codex = codexHome(responses.baseUrl);
    // tether gives Codex its notify program; the recording hooks would stop Codex on a trust screen.
    rmSync(join(codex.dir, 'hooks.json'));
    Object.assign(env, codex.env, { NODE_EXTRA_CA_CERTS: apns.caFile });
    for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  }, 60_000);

  afterAll(async () => {
    await apns?.close();
    await responses?.close();
    codex?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const fx = useDaemon(() => agentWithPushToml('codex', [], apns), { extraEnv: env });

  beforeAll(async () => {
    await pairDevice(fx, 'phone', PHONE, 'sandbox');
    const r = await fx.json('POST', '/sessions', { name: 'cx', agent: 'codex', cwd: codex.cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    m = fx.mirror('cx');
    m.stream.on('state', (f: StateFrame) => {
      if (f.stop && !stopSeenAt.has(f.stop.id)) stopSeenAt.set(f.stop.id, Date.now());
    });
    await explained(shows(['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'], AGENT_START_MS, 'Codex ready on the client'));
  }, AGENT_START_MS + 60_000);

  const explained = <T>(p: Promise<T>): Promise<T> => explainedBy(fx.d, p, 60);
  const shows = (texts: string[], ms: number, what: string) => showsOn(m, texts, ms, what, POLL_MS);
  const listedStop = async (): Promise<Stop | null> =>
    ((await (await fx.d.get('/sessions')).json()) as { id: string; stop: Stop | null }[]).find((s) => s.id === 'cx')?.stop ?? null;
  const pushes = () => apns.sandbox.requests.map((q) => q.payload as { aps: Record<string, unknown>; stopId?: string; resetsAt?: string });

  /** The stop the list held before the current step: the step waits for another one. */
  let previous: string | null = null;
  /** Types a prompt; resolves when the screen shows `words` (the agent showing its stop), with when it did. */
  const prompt = async (text: string, words: string[]): Promise<number> => {
    previous = (await listedStop())?.id ?? null;
    m.stream.sendKeys(text);
    await explained(shows([text], TURN_MS, `the typed "${text}"`));
    m.stream.sendKey('enter');
    await explained(shows(words, TURN_MS, `the agent showing ${words.join(', ')}`));
    return Date.now();
  };

  /** The stop in the list (and on the stream, when `framed`) within STOP_SEEN_MS of `shownAt`. */
  const stopSeen = async (kind: Stop['kind'], shownAt: number, framed = true): Promise<Stop> => {
    const stop = await explained(
      eventually(
        async () => {
          const s = await listedStop();
          if (s?.kind !== kind || s.id === previous) throw new Error(`the list's stop is ${JSON.stringify(s)}`);
          return s;
        },
        STOP_SEEN_MS + 10_000,
        POLL_MS,
        `a ${kind} stop in the list`,
      ),
    );
    const listedAt = Date.now();
    expect(listedAt - shownAt, 'in the list within 2 s of the agent showing it').toBeLessThan(STOP_SEEN_MS + POLL_MS * 2);
    if (framed) {
      // The frame crosses the WebSocket; the list was asked directly: it may come a moment later.
      const at = await explained(
        eventually(() => stopSeenAt.get(stop.id), STOP_SEEN_MS + 10_000, POLL_MS, 'a state frame carrying the stop'),
      );
      expect(at! - shownAt, 'on the stream within 2 s of the agent showing it').toBeLessThan(STOP_SEEN_MS);
    }
    expect((await (await fx.d.get('/sessions/cx')).json()) as { stop: Stop | null }).toMatchObject({ stop });
    return stop;
  };

  test(
    'an API error it gives up on: the error stop with its words, one push with them',
    async () => {
      mode = 'error';
      const before = apns.sandbox.requests.length;
      const shownAt = await prompt('try again', ['experiencing high demand']);
      const stop = await stopSeen('error', shownAt);
      expect(stop.agent).toBe('codex');
      expect(stop.message).toBe('We’re currently experiencing high demand, which may cause temporary errors.');
      expect(stop.resetsAt).toBeUndefined();
      await explained(
        eventually(
          () =>
            pushes()
              .slice(before)
              .some((p) => p.stopId === stop.id),
          30_000,
          POLL_MS,
          'the push',
        ),
      );
      const push = pushes().slice(before);
      expect(push, JSON.stringify(push)).toHaveLength(1);
      expect(push[0]).toMatchObject({
        aps: { alert: { title: 'Codex stopped on an error', subtitle: 'cx' }, category: 'TETHER_STOPPED_ERROR' },
      });
      expect((push[0]!.aps.alert as { body: string }).body).toContain('experiencing high demand');
    },
    TEST_MS,
  );

  test(
    'a usage limit: the stop with its reset on the stream and in the list, one time-sensitive push naming the reset',
    async () => {
      mode = 'usage-limit';
      const before = apns.sandbox.requests.length;
      const shownAt = await prompt('hello there', ['You’ve hit your usage limit']);
      const stop = await stopSeen('usage-limit', shownAt);
      expect(stop).toMatchObject({ agent: 'codex', limit: 'five_hour', resetsAt: new Date(reset * 1000).toISOString() });
      expect(stop.message).toMatch(/^You’ve hit your usage limit\..* try again at /);
      const frame = stateFrames(m).find((f) => f.stop?.id === stop.id);
      expect(frame).toMatchObject({ value: 'awaiting-input', stop });
      await explained(
        eventually(
          () =>
            pushes()
              .slice(before)
              .some((p) => p.stopId === stop.id),
          30_000,
          POLL_MS,
          'the push',
        ),
      );
      const push = pushes().slice(before);
      expect(push, JSON.stringify(push)).toHaveLength(1);
      const clock = new Date(reset * 1000).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });
      expect(push[0]).toMatchObject({
        aps: {
          alert: { title: `Codex reached its usage limit · resets ${clock}`, subtitle: 'cx' },
          category: 'TETHER_USAGE_LIMIT',
          'interruption-level': 'time-sensitive',
        },
        resetsAt: stop.resetsAt,
        limit: 'five_hour',
      });
      // Codex then offers a smaller model in a dialog that takes the keys: one Escape closes it (more
      // reach the prompt, where Escape is Codex's key for editing the previous prompt).
      await explained(shows(['Approaching rate limits'], TURN_MS, 'the rate limit dialog'));
      m.stream.sendKey('escape');
      await explained(
        eventually(async () => !(await m.text()).includes('Approaching rate limits'), 30_000, POLL_MS, 'the rate limit dialog closed'),
      );
      await explained(shows(['Ask Codex to do anything', '? for shortcuts'], TURN_MS, 'the empty prompt and its footer back'));
    },
    TEST_MS,
  );

  test(
    'killed by a signal: the exited stop names it in the list, one push',
    async () => {
      const before = apns.sandbox.requests.length;
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '-t', '=cx:', '#{pane_pid}')).trim());
      expect(pid).toBeGreaterThan(0);
      previous = (await listedStop())?.id ?? null;
      process.kill(pid, 'SIGKILL');
      const killedAt = Date.now();
      // No agent reports any more, so no state frame: the list (and session-meta's `exited`) say it.
      const stop = await stopSeen('exited', killedAt, false);
      expect(stop).toMatchObject({ agent: 'codex', signal: 'SIGKILL', message: 'killed by SIGKILL' });
      await explained(eventually(() => pushes().length > before, 30_000, POLL_MS, 'the push'));
      expect(pushes().slice(before)).toHaveLength(1);
      expect(pushes()[before]).toMatchObject({ aps: { alert: { title: 'Codex crashed: killed by SIGKILL' } } });
    },
    TEST_MS,
  );
});
