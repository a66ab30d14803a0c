/**
 * Continue when it resets, chosen once (docs/api.md "Continue"), end to end: the built daemon on
 * a private tmux server, its default session running the real pi driven by a local fake model.
 * A continue is scheduled over REST; what a person would see: it waits in the list and on the
 * stream's state frames, then its text reaches the model exactly once (pi's next turn), it is
 * in the answer log by the device that chose it, and the list says it was typed. Cancelled, or
 * overtaken by a person typing first, nothing reaches the model and the schedule says why; a
 * daemon restarted in between reads it back from tmux and types it once. Every refusal changes
 * nothing.
 */
import { describe, expect, it } from 'vitest';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { useFakePi } from '../helpers/fake-pi-fixture.js';
import { lastOfRole, messageText } from '../helpers/fake-model.js';
import { eventually } from '../helpers/tmux.js';
import { explainedBy } from '../helpers/daemon.js';
import type { ContinueSchedule } from '../../src/protocol/continue.js';

/** pi starts slowly on two shared cores: waits are generous, never sleeps. */
const PI_START_MS = 60_000;
const TURN_MS = 45_000;
const SESSION = 'pi-main';

describe('a continue scheduled over REST, typed into the real pi', () => {
  const fp = useFakePi((req) => ({ text: `You said: ${messageText(lastOfRole(req, 'user')).slice(0, 40)}` }));
  const fx = useDaemon(`[agent]\ndefault_session = "${SESSION}"\n`, {
    extraEnv: () => fp.pi.env,
    startTimeoutMs: 30_000,
    setupTimeoutMs: 60_000,
  });
  const listed = async () =>
    ((await (await fx.d.get('/sessions')).json()) as { id: string; agentState: string | null; continue: ContinueSchedule | null }[]).find(
      (s) => s.id === SESSION,
    );
  /** How many of the model's requests carry `text` as their last user message. */
  const reached = (text: string) => fp.model.requests.filter((r) => messageText(lastOfRole(r, 'user')) === text).length;
  const waitsForPrompt = () =>
    eventually(async () => ['idle', 'awaiting-input'].includes((await listed())?.agentState ?? ''), PI_START_MS, 100, 'pi waits');
  const schedule = async (body: unknown) => {
    const res = await fx.json('POST', `/sessions/${SESSION}/continue`, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as ContinueSchedule;
  };
  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  /** A continue at `seconds` from now that must be typed: the point after which an earlier one would have been. */
  const typedLater = async (text: string, seconds: number) => {
    await schedule({ at: inSeconds(seconds), text });
    await eventually(() => reached(text) === 1, TURN_MS, 50, `"${text}" reaching the model`);
  };
  /** The same, due 2 s after `due` (an earlier continue's time) or 2 s from now, whichever is later. */
  const typedAfter = (text: string, due: string) => typedLater(text, Math.max(0, Date.parse(due) - Date.now()) / 1000 + 2);

  it('refuses what it cannot do, changing nothing', { timeout: 90_000 }, async () => {
    await waitsForPrompt();
    const refused = async (body: unknown, status: number, error: string, session = SESSION) => {
      const res = await fx.json('POST', `/sessions/${session}/continue`, body);
      expect([res.status, ((await res.json()) as { error: string }).error], JSON.stringify(body)).toEqual([status, error]);
    };
    // pi has not stopped on a usage limit.
    await refused({ at: 'reset' }, 409, 'no-usage-limit');
    await refused({ at: new Date(Date.now() - 60_000).toISOString() }, 400, 'bad-request');
    await refused({ at: new Date(Date.now() + 8 * 24 * 3600_000).toISOString() }, 400, 'bad-request');
    await refused({ at: 'tomorrow' }, 400, 'bad-request');
    await refused({ at: '2030-01-01 09:00' }, 400, 'bad-request');
    await refused({ at: 42 }, 400, 'bad-request');
    await refused({}, 400, 'bad-request');
    await refused({ at: inSeconds(60), text: 7 }, 400, 'bad-request');
    await refused({ at: inSeconds(60), when: 'now' }, 400, 'bad-request');
    await refused({ at: inSeconds(60), text: 'x'.repeat(1001) }, 400, 'bad-request');
    await refused({ at: inSeconds(60), text: 'go on\nrm -rf /' }, 400, 'bad-request');
    await refused({ at: inSeconds(60), text: 'go on\u001b[A' }, 400, 'bad-request');
    await refused({ at: inSeconds(60), text: '   ' }, 400, 'bad-request');
    await refused({ at: inSeconds(60) }, 404, 'session-not-found', 'nobody-here');
    const cancel = await fx.json('DELETE', `/sessions/${SESSION}/continue`);
    expect([cancel.status, ((await cancel.json()) as { error: string }).error]).toEqual([404, 'continue-not-found']);
    expect((await listed())?.continue).toBeNull();
    const tmuxHolds = await fx.tmux.tmux('show-options', '-qv', '-t', `=${SESSION}:`, '@tether-continue');
    expect(tmuxHolds).toBe('');
  });

  it('types the text once at its time: the model gets it, the list and the answer log say so', { timeout: 120_000 }, async () => {
    await waitsForPrompt();
    const mirror = fx.mirror(SESSION);
    await eventually(() => mirror.kinds().includes('state'), 15_000, 25, 'the first state frame');
    const text = 'continue, first';
    const made = await schedule({ at: inSeconds(3), text });
    expect(made).toMatchObject({ text, status: 'waiting', stopId: null });
    expect(made.by).not.toBe('');
    expect((await listed())?.continue).toEqual(made);
    // tmux holds it, as JSON, the text as given.
    const held = await fx.tmux.tmux('show-options', '-qv', '-t', `=${SESSION}:`, '@tether-continue');
    expect(JSON.parse(held) as ContinueSchedule).toEqual(made);
    await explainedBy(
      fx.d,
      eventually(() => reached(text) === 1, TURN_MS, 50, 'the continue reaching the model'),
    );
    const done = await eventually(async () => ((await listed())?.continue?.status === 'typed' ? (await listed())?.continue : null), 15_000);
    expect(done).toMatchObject({ id: made.id, status: 'typed', by: made.by });
    const frames = mirror.received.flatMap((r) => (r.kind === 'state' && r.frame.continue ? [r.frame.continue as ContinueSchedule] : []));
    expect(frames.some((c) => c.status === 'waiting' && c.id === made.id)).toBe(true);
    expect(frames.some((c) => c.status === 'typed' && c.id === made.id)).toBe(true);
    const answers = (await (await fx.d.get('/ops/answers')).json()) as {
      answers: { kind: string; ask: string; by: string; session: string }[];
    };
    expect(answers.answers.filter((a) => a.kind === 'continue' && a.ask === made.id)).toEqual([
      expect.objectContaining({ session: SESSION, by: made.by }),
    ]);
    // Once: the agent's turn ends and nothing types it again.
    await waitsForPrompt();
    await typedLater('continue, after the first', 2);
    expect(reached(text)).toBe(1);
  });

  it('cancelled, nothing is typed', { timeout: 120_000 }, async () => {
    await waitsForPrompt();
    const text = 'continue, cancelled';
    const made = await schedule({ at: inSeconds(3), text });
    const res = await fx.json('DELETE', `/sessions/${SESSION}/continue`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: made.id, status: 'cancelled' });
    expect((await listed())?.continue).toMatchObject({ id: made.id, status: 'cancelled' });
    // A later one is typed after the cancelled one's time: by then it would have been typed.
    await typedAfter('continue, after the cancelled', made.at);
    expect(reached(text)).toBe(0);
  });

  it('a person typing first wins: nothing is typed, the schedule says why', { timeout: 120_000 }, async () => {
    await waitsForPrompt();
    const text = 'continue, overtaken';
    // Due well after the person's turn has begun, even on a busy machine.
    const made = await schedule({ at: inSeconds(12), text });
    for (const body of [
      { type: 'keys', data: 'I go on myself' },
      { type: 'key', name: 'enter' },
    ])
      expect((await fx.json('POST', `/sessions/${SESSION}/input`, body)).status).toBe(204);
    const skipped = await eventually(
      async () => ((await listed())?.continue?.status === 'skipped' ? (await listed())?.continue : null),
      TURN_MS,
      100,
      'the schedule skipped',
    );
    expect(skipped).toMatchObject({ id: made.id, reason: 'the agent started a turn before the continue was due' });
    await waitsForPrompt();
    await typedAfter('continue, after the overtaken', made.at);
    expect(reached(text)).toBe(0);
    expect(reached('I go on myself')).toBe(1);
  });

  it('the daemon restarted in between: read back from tmux, typed once', { timeout: 180_000 }, async () => {
    await waitsForPrompt();
    const text = 'continue, across a restart';
    const made = await schedule({ at: inSeconds(4), text });
    await fx.d.kill();
    expect(JSON.parse(await fx.tmux.tmux('show-options', '-qv', '-t', `=${SESSION}:`, '@tether-continue'))).toEqual(made);
    await fx.startAgain(60_000);
    await explainedBy(
      fx.d,
      eventually(() => reached(text) === 1, PI_START_MS, 50, 'the continue reaching the model after the restart'),
    );
    await eventually(async () => (await listed())?.continue?.status === 'typed', 15_000, 100, 'the list saying typed');
    // tmux holds it as typed: another restart does not type it again.
    expect(JSON.parse(await fx.tmux.tmux('show-options', '-qv', '-t', `=${SESSION}:`, '@tether-continue'))).toMatchObject({
      id: made.id,
      status: 'typed',
    });
    await fx.d.kill();
    await fx.startAgain(60_000);
    await waitsForPrompt();
    await typedLater('continue, after the restarts', 3);
    expect(reached(text)).toBe(1);
  });

  it('a reboot in between: the tmux server gone, the session restored with its continue, typed once', { timeout: 240_000 }, async () => {
    await waitsForPrompt();
    const text = 'continue, across a reboot';
    const made = await schedule({ at: inSeconds(5), text });
    expect(await fx.d.stop()).toBe(0);
    const server = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    process.kill(server, 'SIGKILL');
    await eventually(async () => (await fx.tmux.tmux('list-sessions').catch(() => 'gone')) === 'gone', 15_000, 25, 'the tmux server gone');
    await fx.startAgain(60_000);
    await explainedBy(
      fx.d,
      eventually(() => reached(text) === 1, PI_START_MS * 2, 50, 'the continue reaching the model after the reboot'),
    );
    await eventually(async () => (await listed())?.continue?.status === 'typed', 15_000, 100, 'the list saying typed');
    expect((await listed())?.continue?.id).toBe(made.id);
  });
});
