/**
 * The prompts every real agent must take from a phone (docs/api.md "Prompts"), one `describe`
 * per agent: 20 prompts in a row, each sent as soon as the one before was submitted, reach the
 * model exactly once each and end `submitted`; a three-line prompt arrives as one user message
 * with its lines; a continue scheduled a few seconds ahead is submitted once, at its time. Each
 * agent's test file calls `promptsTo` with its fixture's options.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { TURN_MS, useRealAgent, type AgentHomeLike, type AgentParts, type Closable, type RealAgentOptions } from './agent-fixture.js';
import { startFakeModel, type FakeModel, type FakeScript } from './fake-model.js';
import { piHome, type PiHome } from './pi-home.js';
import type { PromptRecord } from '../../src/protocol/prompt.js';
import { continueOf, listedPrompts, promptDecided, TURNS, turnsWith, waitingSince } from './prompt-runs.js';
import { eventually } from './tmux.js';

/** Prompts sent in a row. */
export const PROMPTS_IN_A_ROW = 20;
const TEST_MS = 600_000;

/** The three-line prompt. */
export const THREE_LINES = 'first line alpha\nsecond line beta\nthird line gamma';

/** The text of the continue each agent is given. */
const CONTINUE_TEXT = 'go on with the plan';

export interface PromptSuite<F extends Closable & { requests: readonly unknown[] }, H extends AgentHomeLike> {
  /** How the agent is named in the tests' titles. */
  readonly title: string;
  /** Which model requests are the agent's own turns. */
  readonly turns: keyof typeof TURNS;
  readonly fixture: RealAgentOptions<F, H> & { session: NonNullable<RealAgentOptions<F, H>['session']> };
}

export function promptsTo<F extends Closable & { requests: readonly unknown[] }, H extends AgentHomeLike>(s: PromptSuite<F, H>): void {
  describe(`prompts from a phone to ${s.title}`, () => {
    const a = useRealAgent(s.fixture);
    const session = s.fixture.session.name;
    const turns = () => TURNS[s.turns](a.fake.requests);

    test(
      `${PROMPTS_IN_A_ROW} prompts in a row, each sent once the one before was submitted, reach the model once each`,
      async () => {
        const texts = Array.from({ length: PROMPTS_IN_A_ROW }, (_, i) => `prompt ${i + 1} of the run, word ${(i * 7919) % 1000}`);
        let last: PromptRecord | undefined;
        for (const [i, text] of texts.entries()) {
          last = await a.explained(promptDecided(a.fx, session, { text, id: `row-${i + 1}` }, TURN_MS));
        }
        // The agent's report comes as it takes the prompt, its model request a moment later: once the
        // last one reached the model and the agent waits again, every turn the model saw holds each
        // prompt exactly once, none merged with another, none lost.
        await a.explained(eventually(() => turnsWith(turns(), texts.at(-1)!) > 0, TURN_MS, 100, 'the last prompt at the model'));
        await a.explained(
          eventually(() => waitingSince(a.fx, session, last!.decidedAt!), TURN_MS, 100, 'the agent waiting after the last turn'),
        );
        const seen = turns();
        for (const text of texts) expect(turnsWith(seen, text), `"${text}" in the model's turns`).toBe(1);
        const listed = await listedPrompts(a.fx, session);
        expect(listed.filter((p) => p.id.startsWith('row-')).map((p) => p.status)).toEqual(texts.map(() => 'submitted'));
      },
      TEST_MS,
    );

    test(
      'a three-line prompt reaches the model as one user message with its lines',
      async () => {
        const before = turns().length;
        const sent = await a.explained(promptDecided(a.fx, session, { text: THREE_LINES }, TURN_MS));
        await a.explained(eventually(() => turnsWith(turns().slice(before), THREE_LINES) > 0, TURN_MS, 100, 'the prompt at the model'));
        // Its turn's end, not the one before: the next test schedules a continue, which a turn still
        // to be reported would skip (docs/api.md "Continue": the agent started a turn before it was due).
        await a.explained(
          eventually(() => waitingSince(a.fx, session, sent.decidedAt!), TURN_MS, 100, 'the agent waiting after this turn'),
        );
        const after = turns().slice(before);
        expect(
          after.filter((t) => t.includes(THREE_LINES)),
          JSON.stringify(after),
        ).toHaveLength(1);
      },
      TEST_MS,
    );

    // A continue (docs/api.md "Continue") is typed as a prompt is, at its time: scheduled a few
    // seconds ahead (the agent is not stopped on a usage limit here), it is submitted, not left in
    // the input box, and typed once.
    test(
      'a continue scheduled a few seconds ahead reaches the model once, at its time; the list says typed',
      async () => {
        const at = new Date(Date.now() + 3000).toISOString();
        const res = await a.fx.json('POST', `/sessions/${session}/continue`, { at, text: CONTINUE_TEXT });
        expect(res.status, await res.clone().text()).toBe(201);
        // A failure says what became of the schedule (skipped, and why; still waiting).
        const atModel = eventually(() => turnsWith(turns(), CONTINUE_TEXT) > 0, TURN_MS, 100, 'the continue at the model').catch(
          async (err: Error) => {
            throw new Error(`${err.message}; the continue: ${JSON.stringify(await continueOf(a.fx, session))}`);
          },
        );
        await a.explained(atModel);
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
        await a.explained(
          eventually(async () => (await continueOf(a.fx, session))?.status === 'typed', 15_000, 100, 'the list saying typed'),
        );
        // The continue's turn ended after it was due (the turn before ended before it was scheduled).
        await a.explained(eventually(() => waitingSince(a.fx, session, at), TURN_MS, 100, 'the agent waiting after the continue'));
        expect(turnsWith(turns(), CONTINUE_TEXT)).toBe(1);
      },
      TEST_MS,
    );
  });
}

/** pi's home beside the fake: a working directory of its own. */
export interface PiParts extends AgentHomeLike {
  readonly pi: PiHome;
}

/** The real pi (the one tether bundles) against the fake chat-completions server. */
export function piParts(script: FakeScript): () => Promise<AgentParts<FakeModel, PiParts>> {
  return async () => {
    const fake = await startFakeModel(script);
    const pi = piHome(fake.baseUrl);
    const cwd = mkdtempSync(join(tmpdir(), 'tether-pi-cwd-'));
    return {
      fake,
      home: {
        pi,
        cwd,
        cleanup: () => {
          pi.cleanup();
          rmSync(cwd, { recursive: true, force: true });
        },
      },
      env: pi.env,
    };
  };
}
