/**
 * Claude Code with an API key (no subscriber's login) meeting a usage limit (docs/agents.md
 * "Stops"): the real Claude Code 2.1.328 against the fake Anthropic server answering the same 429
 * with the `anthropic-ratelimit-unified-*` headers as in stops-claude.test.ts, its retries off.
 * Claude shows no usage limit then: it ends on `API Error: Request rejected (429)`, and the stop
 * is an `error` with those words (no reset), pushed once as an error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AGENT_ENV_CLEARED } from '../../testkit/agent-bins.js';
import { startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { claudeHome, type ClaudeHome } from '../../testkit/claude-home.js';
import { isAgentTurn, startFakeAnthropic, usageLimitReply, type AnthropicReply, type FakeAnthropic } from '../../testkit/fake-anthropic.js';
import { agentWithPushToml, CLAUDE_ASKS } from '../helpers/agent-config.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { explainedBy } from '../helpers/daemon.js';
import { pairDevice } from '../helpers/pair-device.js';
import { shows as showsOn, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { StateFrame, Stop } from '../../src/protocol/frames.js';

/** A cold start of a 370 MB binary on a busy two-core machine. */
const AGENT_START_MS = 90_000;
const TURN_MS = 90_000;
const TEST_MS = 240_000;
const POLL_MS = 50;
/** The bound of the issue: the stop is on the stream and in the list within 2 s of the agent showing it. */
const STOP_SEEN_MS = 2000;
const PHONE = 'c8'.repeat(32);

/** How the fake answers the agent's next turn. */
type Mode = 'ok' | 'usage-limit' | 'error';

describe('Claude Code with an API key: a usage-limit 429 is an error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-stops-claude-key-'));
  let apns: ApnsStandIns;
  let anthropic: FakeAnthropic;
  let claude: ClaudeHome;
  let m: Mirror;
  let mode: Mode = 'ok';
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = Math.ceil(Date.now() / 60_000) * 60 + 3 * 3600;
  const env: NodeJS.ProcessEnv = {};
  /** When each stop first came on a state frame (by stop id). */
  const stopSeenAt = new Map<string, number>();

  const reply = (): AnthropicReply => {
    if (mode === 'usage-limit') {
      return usageLimitReply(reset);
    }
    if (mode === 'error')
      return { status: 500, errorBody: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } };
    return { text: 'All done.' };
  };

  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
    anthropic = await startFakeAnthropic((req) => (isAgentTurn(req) ? reply() : { text: 'Title' }));
    claude = claudeHome(anthropic.baseUrl);
    // A subscriber's login: Claude sends the token as a bearer and shows the usage limit.
    Object.assign(env, { NODE_EXTRA_CA_CERTS: apns.caFile }, claude.env, {
      // A 500 is retried ten times over minutes unless told otherwise.
      CLAUDE_CODE_MAX_RETRIES: '0',
    });
    for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  }, 60_000);

  afterAll(async () => {
    await apns?.close();
    await anthropic?.close();
    claude?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const fx = useDaemon(() => agentWithPushToml('claude', CLAUDE_ASKS, apns), { extraEnv: env });

  beforeAll(async () => {
    await pairDevice(fx, 'phone', PHONE, 'sandbox');
    const r = await fx.json('POST', '/sessions', { name: 'cc', agent: 'claude', cwd: claude.cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    m = fx.mirror('cc');
    m.stream.on('state', (f: StateFrame) => {
      if (f.stop && !stopSeenAt.has(f.stop.id)) stopSeenAt.set(f.stop.id, Date.now());
    });
    await explained(shows(['Claude Code v2.1.328'], AGENT_START_MS, 'Claude ready on the client'));
  }, AGENT_START_MS + 60_000);

  const explained = <T>(p: Promise<T>): Promise<T> => explainedBy(fx.d, p, 60);
  const shows = (texts: string[], ms: number, what: string) => showsOn(m, texts, ms, what, POLL_MS);
  const listedStop = async (): Promise<Stop | null> =>
    ((await (await fx.d.get('/sessions')).json()) as { id: string; stop: Stop | null }[]).find((s) => s.id === 'cc')?.stop ?? null;
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
    expect((await (await fx.d.get('/sessions/cc')).json()) as { stop: Stop | null }).toMatchObject({ stop });
    return stop;
  };

  test(
    'the usage-limit 429: an error stop with its words, one push',
    async () => {
      mode = 'usage-limit';
      const before = apns.sandbox.requests.length;
      const shownAt = await prompt('hello there', ['API Error: Request rejected (429)']);
      const stop = await stopSeen('error', shownAt);
      expect(stop).toMatchObject({ agent: 'claude', message: 'API Error: Request rejected (429) · Rate limited' });
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
      expect(pushes().slice(before)).toHaveLength(1);
      expect(pushes()[before]).toMatchObject({ aps: { alert: { title: 'Claude stopped on an error' }, category: 'TETHER_STOPPED_ERROR' } });
    },
    TEST_MS,
  );
});
