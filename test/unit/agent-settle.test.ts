/**
 * The awaiting-input verdict of the extension: decided on a later tick (pi is not idle inside
 * agent_end), "not idle" when pi retries or continues, and agent_settled where pi has it.
 * Pure logic: a scripted pi context and a manual timer queue.
 */
import { describe, expect, it } from 'vitest';
import { agentPackageOf, hasSettledEvent, type PiContext } from '../../src/extension/pi-api.js';
import { SettleWatcher, endsWithRetryableError } from '../../src/extension/settle.js';

function harness(settledEvent = false) {
  const verdicts: boolean[] = [];
  const timers: { fn: () => void; ms: number; live: boolean }[] = [];
  const w = new SettleWatcher({
    settledEvent,
    verdict: (idle) => verdicts.push(idle),
    setTimer: (fn, ms) => {
      const t = { fn, ms, live: true };
      timers.push(t);
      return { cancel: () => (t.live = false) };
    },
  });
  const tick = () => {
    const due = timers.filter((t) => t.live);
    timers.length = 0;
    for (const t of due) {
      t.live = false;
      t.fn();
    }
    return due.map((t) => t.ms);
  };
  let idle = false;
  let pending = false;
  const ctx = { isIdle: () => idle, hasPendingMessages: () => pending } as unknown as PiContext;
  return { w, verdicts, tick, ctx, set: (i: boolean, p = false) => ((idle = i), (pending = p)) };
}

const done = [{ role: 'user' }, { role: 'assistant', stopReason: 'stop' }];
const overloaded = [{ role: 'assistant', stopReason: 'error', errorMessage: '529 overloaded_error' }];

describe('awaiting-input verdict', () => {
  it('decides idle on the next tick, not inside agent_end', () => {
    const h = harness();
    h.w.agentEnd(done, h.ctx);
    expect(h.verdicts).toEqual([]);
    h.set(true);
    expect(h.tick()).toEqual([0]);
    expect(h.verdicts).toEqual([true]);
  });

  it('waits while messages are pending, and says "not idle" when the agent starts again', () => {
    const h = harness();
    h.w.agentEnd(done, h.ctx);
    h.set(true, true);
    h.tick();
    expect(h.verdicts).toEqual([]);
    h.w.agentStart();
    expect(h.verdicts).toEqual([false]);
    expect(h.tick()).toEqual([]);
  });

  it('does not report a retryable error as waiting; the retry\'s agent_start answers "not idle"', () => {
    const h = harness();
    h.set(true);
    h.w.agentEnd(overloaded, h.ctx);
    expect(h.verdicts).toEqual([]);
    h.w.agentStart();
    expect(h.verdicts).toEqual([false]);
  });

  it("takes a retryable error as waiting once pi's back-off passed without a retry", () => {
    const h = harness();
    h.set(true);
    h.w.agentEnd(overloaded, h.ctx);
    expect(h.tick()).toEqual([5000]);
    expect(h.verdicts).toEqual([true]);
    h.w.agentEnd(overloaded, h.ctx);
    expect(h.tick()).toEqual([7000]);
  });

  it('uses agent_settled where pi has it', () => {
    const h = harness(true);
    h.set(true);
    h.w.agentEnd(done, h.ctx);
    expect(h.tick()).toEqual([]);
    h.w.agentSettled();
    expect(h.verdicts).toEqual([true]);
  });

  it('switches to agent_settled once seen, and gives one verdict per agent_end', () => {
    const h = harness(false);
    h.w.agentSettled();
    expect(h.verdicts).toEqual([true]);
    h.w.agentEnd(done, h.ctx);
    expect(h.tick()).toEqual([]);
    h.w.agentSettled();
    h.w.agentStart();
    expect(h.verdicts).toEqual([true, true]);
  });

  it('a stale context ends the watch quietly', () => {
    const h = harness();
    const stale = {
      isIdle: () => {
        throw new Error('stale');
      },
      hasPendingMessages: () => false,
    } as unknown as PiContext;
    h.w.agentEnd(done, stale);
    expect(() => h.tick()).not.toThrow();
    expect(h.verdicts).toEqual([]);
  });

  it('recognises retryable errors only on the last assistant message', () => {
    expect(endsWithRetryableError(overloaded)).toBe(true);
    expect(endsWithRetryableError([...overloaded, { role: 'assistant', stopReason: 'stop' }])).toBe(false);
    expect(endsWithRetryableError([{ role: 'assistant', stopReason: 'error', errorMessage: 'invalid api key' }])).toBe(false);
    expect(endsWithRetryableError(undefined)).toBe(false);
  });
});

describe('which pi runs', () => {
  it('knows the versions with agent_settled', () => {
    expect(hasSettledEvent('0.73.1')).toBe(false);
    expect(hasSettledEvent('0.80.3')).toBe(false);
    expect(hasSettledEvent('0.80.4')).toBe(true);
    expect(hasSettledEvent('1.5.2')).toBe(true);
    expect(hasSettledEvent('garbage')).toBe(false);
  });

  it('finds the installed agent package from its CLI script', () => {
    const pkg = agentPackageOf(new URL('../../node_modules/@mariozechner/pi-coding-agent/dist/cli.js', import.meta.url).pathname);
    expect(pkg).toEqual({ name: '@mariozechner/pi-coding-agent', version: '0.73.1' });
    expect(agentPackageOf('/nonexistent/cli.js')).toBeNull();
  });
});
