/**
 * What the ask tests of the real agents do and check (docs/api.md "Asks"), on the real-agent
 * fixture (agent-fixture.ts): a prompt whose turn asks, the ask the stream client gets; an answer
 * sent on the stream the moment an ask appears; the turn's end after an answer.
 */
import { expect } from 'vitest';
import { TURN_MS, type AgentHomeLike, type Closable, type RealAgent } from './agent-fixture.js';
import { stateFrames } from './stream.js';
import { eventually } from './tmux.js';
import type { AnsweredFrame } from '../../src/reference-client/index.js';
import type { Ask } from '../../src/protocol/frames.js';

const POLL_MS = 100;

/**
 * Types `text` (a prompt whose turn asks); resolves with the first ask the client gets that it
 * had not seen before, its frame awaiting input. `more` adds to the failure (what the model got).
 */
export async function newAsk<F extends Closable, H extends AgentHomeLike>(a: RealAgent<F, H>, text: string, more = () => ''): Promise<Ask> {
  const seen = new Set(stateFrames(a.m).flatMap((s) => (s.ask ? [s.ask.id] : [])));
  await a.type(text);
  return a.explained(
    eventually(
      () => {
        const frame = stateFrames(a.m).find((s) => s.ask !== undefined && !seen.has(s.ask.id));
        if (!frame) throw new Error(`no new ask; states: ${JSON.stringify(stateFrames(a.m).slice(-4))}${more()}`);
        expect(frame.value).toBe('awaiting-input');
        return frame.ask!;
      },
      TURN_MS,
      POLL_MS,
      'an ask on the stream',
    ),
  );
}

/**
 * Types `text` and answers `yes` on the stream from the state frame's own event, the moment the
 * ask arrives (no wait at all); resolves with the ask answered and the answered frame, once it came.
 */
export async function answeredAsItAppears<F extends Closable, H extends AgentHomeLike>(
  a: RealAgent<F, H>,
  text: string,
): Promise<{ sent: string; answered: AnsweredFrame }> {
  const m = a.m;
  let sent = '';
  const onState = (frame: { ask?: Ask }) => {
    if (frame.ask && sent === '') {
      sent = frame.ask.id;
      m.stream.answer(frame.ask.id, 'yes');
    }
  };
  const errorsBefore = m.errors().length;
  const answered = () => m.received.find((x) => x.kind === 'answered' && x.frame.ask === sent);
  m.stream.on('state', onState);
  try {
    await a.type(text);
    const got = await a.explained(
      eventually(
        () => {
          if (m.errors().length > errorsBefore) throw new Error(`error frames: ${JSON.stringify(m.errors().slice(errorsBefore))}`);
          return answered();
        },
        TURN_MS,
        POLL_MS,
        'the answered frame',
      ),
    );
    return { sent, answered: (got as { frame: AnsweredFrame }).frame };
  } finally {
    m.stream.off('state', onState);
  }
}

/**
 * The turn ended: `final` (the model's last words) on screen, the state awaiting-input without an
 * ask; then each file of `ran` in the agent's directory has the lines its command appended that
 * many times.
 */
export async function turnEnded<F extends Closable, H extends AgentHomeLike>(
  a: RealAgent<F, H>,
  final: readonly string[],
  what: string,
  ran: Record<string, number> = {},
) {
  await a.explained(a.shows(final, TURN_MS, `the answer after ${what}`));
  await a.explained(
    eventually(
      () => stateFrames(a.m).at(-1)?.value === 'awaiting-input' && !stateFrames(a.m).at(-1)?.ask,
      TURN_MS,
      POLL_MS,
      `awaiting-input after ${what}`,
    ),
  );
  for (const [file, times] of Object.entries(ran)) expect(a.runs(file), `the runs in ${file} after ${what}`).toBe(times);
}

/**
 * The phone answers `ask` with `choice` (in `session`, the fixture's unless given): the reply's
 * status is `status`, its body holds `body` when given. Resolves with the body.
 */
export async function answered<F extends Closable, H extends AgentHomeLike>(
  a: RealAgent<F, H>,
  ask: string,
  choice: string,
  status: number,
  body?: Record<string, unknown>,
  session?: string,
): Promise<unknown> {
  const r = await a.answer(ask, choice, session === undefined ? {} : { session });
  const text = await r.text();
  expect(r.status, text).toBe(status);
  const json = JSON.parse(text) as unknown;
  if (body !== undefined) expect(json).toMatchObject(body);
  return json;
}

/** Answers that are wrong change nothing: a choice `ask` does not offer (400), and `choice` for an ask that never was (404). */
export async function wrongAnswersRefused<F extends Closable, H extends AgentHomeLike>(
  a: RealAgent<F, H>,
  ask: string,
  choice: string,
  session?: string,
): Promise<void> {
  const opts = session === undefined ? {} : { session };
  expect((await a.answer(ask, 'maybe', opts)).status).toBe(400);
  expect((await a.answer('0f6c3a8e-6a43-4d0b-9d0e-5a3c2b1f7e21', choice, opts)).status).toBe(404);
}
