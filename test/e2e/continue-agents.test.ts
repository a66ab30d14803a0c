/**
 * A scheduled continue (docs/api.md "Continue") reaches the model with every agent whose input
 * box tells typed text from a paste by its timing: Codex, Gemini CLI and opencode, each the real
 * agent against its fake model server, the built daemon. The continue is scheduled a few seconds
 * ahead at a time of its own (none of them is stopped on a usage limit here); what is checked is
 * what the person would see: the text submitted as a prompt (it reaches the model), typed once,
 * and the schedule saying typed.
 */
import { describe, expect, test } from 'vitest';
import { isAgentTurn, sideReply } from '../../testkit/fake-gemini.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { TURN_MS, useRealAgent, type AgentHomeLike, type RealAgent } from '../helpers/agent-fixture.js';
import { CODEX_CX, codexParts, geminiParts, opencodeParts } from '../helpers/agent-parts.js';
import { eventually } from '../helpers/tmux.js';
import type { ContinueSchedule } from '../../src/protocol/continue.js';

const TEST_MS = 180_000;
const POLL_MS = 100;
const TEXT = 'go on with the plan';

/** Schedules the continue 3 s ahead; resolves once the model got it and the list says typed. */
async function continued(
  a: RealAgent<{ requests: readonly unknown[]; close: () => Promise<void> }, AgentHomeLike>,
  session: string,
): Promise<void> {
  const at = new Date(Date.now() + 3000).toISOString();
  const res = await a.fx.json('POST', `/sessions/${session}/continue`, { at, text: TEXT });
  expect(res.status, await res.clone().text()).toBe(201);
  const reached = () => a.fake.requests.filter((r) => JSON.stringify(r).includes(TEXT)).length;
  await a.explained(
    eventually(() => reached() > 0, TURN_MS, POLL_MS, 'the continue reaching the model (submitted, not left in the input box)'),
  );
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
  const listed = async () =>
    ((await (await a.fx.d.get('/sessions')).json()) as { id: string; continue: ContinueSchedule | null }[]).find((s) => s.id === session);
  await a.explained(eventually(async () => (await listed())?.continue?.status === 'typed', 15_000, POLL_MS, 'the list saying typed'));
}

describe('a continue typed into Codex', () => {
  const a = useRealAgent({
    ...CODEX_CX,
    prefix: 'tether-continue-codex-',
    start: codexParts(() => ({ text: 'All done.' })),
    phone: 'c1'.repeat(32),
  });
  test('is submitted: the model gets it', () => continued(a, 'cx'), TEST_MS);
});

describe('a continue typed into Gemini CLI', () => {
  const a = useRealAgent({
    prefix: 'tether-continue-gemini-',
    start: geminiParts((req) => (isAgentTurn(req) ? { text: 'All done.' } : sideReply(req))),
    toml: (apns) => agentWithPushToml('gemini', [], apns),
    phone: 'c2'.repeat(32),
    session: { name: 'gm', agent: 'gemini', ready: ['Gemini CLI v0.61.0', 'Type your message'] },
  });
  test('is submitted: the model gets it', () => continued(a, 'gm'), TEST_MS);
});

describe('a continue typed into opencode', () => {
  const a = useRealAgent({
    prefix: 'tether-continue-opencode-',
    start: opencodeParts(() => ({ text: 'All done.' })),
    toml: (apns) => agentWithPushToml('opencode', [], apns),
    phone: 'c3'.repeat(32),
    session: { name: 'oc', agent: 'opencode', ready: ['Ask anything'] },
  });
  test('is submitted: the model gets it', () => continued(a, 'oc'), TEST_MS);
});
