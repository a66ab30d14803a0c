/**
 * A line typed as a person types it (src/service/prompts/typed-line.ts): the Enter waits until the agent
 * drew the text and its pane was quiet for a while, so no agent takes it as part of a paste.
 */
import { describe, expect, test } from 'vitest';
import { LINE_SETTLE_MAX_MS, LINE_SETTLE_MS, typeLine, type LinePane } from '../../src/service/prompts/typed-line.js';
import type { InputMessage } from '../../src/protocol/input.js';

/**
 * A pane whose agent draws `draws` times, `everyMs` apart, after the text arrives; it records what
 * was typed, when, and how many draws the pane had made by then. The draws' times are read from the
 * same clock as the typing's: a timer of 800 ms can end 799 ms later by `Date.now` (node's timers
 * run on the loop's cached time), so the waits are asserted against the draws themselves.
 */
function pane(draws: number, everyMs: number, followed = true) {
  const typed: { message: InputMessage; at: number; drawn: number }[] = [];
  let position = 100;
  let lastOutputAt: number | null = null;
  const p: LinePane = {
    input: (_session, message) => {
      typed.push({ message, at: Date.now(), drawn: (position - 100) / 10 });
      if (message.type === 'keys')
        for (let i = 1; i <= draws; i++)
          setTimeout(() => {
            position += 10;
            lastOutputAt = Date.now();
          }, i * everyMs);
      return Promise.resolve();
    },
    activity: () => (followed ? { position, lastOutputAt } : null),
  };
  return { p, typed, lastDraw: () => lastOutputAt };
}

describe('typing a line into an agent', () => {
  test('the text, then Enter once the agent drew it and its pane was quiet', async () => {
    const { p, typed, lastDraw } = pane(3, 50);
    await typeLine(p, 's', 'continue', Date.now);
    expect(typed.map((t) => t.message)).toEqual([
      { type: 'keys', data: 'continue' },
      { type: 'key', name: 'Enter' },
    ]);
    // The Enter came after all three draws, and the settle time after the last.
    expect(typed[1]!.drawn).toBe(3);
    expect(typed[1]!.at - lastDraw()!).toBeGreaterThanOrEqual(LINE_SETTLE_MS);
  });

  test('an agent that has not drawn the text yet is waited for', async () => {
    const { p, typed, lastDraw } = pane(1, 800);
    await typeLine(p, 's', 'go on', Date.now);
    // Longer than the settle time with nothing drawn: the Enter still waited for the draw, then the settle time.
    expect(typed[1]!.drawn).toBe(1);
    expect(lastDraw()! - typed[0]!.at).toBeGreaterThan(LINE_SETTLE_MS);
    expect(typed[1]!.at - lastDraw()!).toBeGreaterThanOrEqual(LINE_SETTLE_MS);
  });

  test('a pane that never stops drawing gets its Enter at the longest wait', async () => {
    const { p, typed } = pane(200, 25);
    await typeLine(p, 's', 'go on', Date.now);
    const gap = typed[1]!.at - typed[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(LINE_SETTLE_MAX_MS);
    expect(gap).toBeLessThan(LINE_SETTLE_MAX_MS + 5000);
  }, 15_000);

  test('a pane whose output is not followed gets its Enter after the settle time', async () => {
    const { p, typed } = pane(0, 0, false);
    await typeLine(p, 's', 'go on', Date.now);
    expect(typed[1]!.at - typed[0]!.at).toBeGreaterThanOrEqual(LINE_SETTLE_MS);
  });
});
