import { describe, expect, it } from 'vitest';
import { makesNotifications, TopologyGate } from '../../src/tmux/topology-gate.js';

/** A task that records when it starts and ends, and ends when told. */
function task(log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return {
    fn: async () => {
      log.push(`${name}+`);
      await ended;
      log.push(`${name}-`);
    },
    end: () => end(),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

/**
 * Submits the tasks to a new gate in order (an attach is a `read`, a notifying command a
 * `write`). `log` is the log once pending callbacks ran; `endNext` ends the earliest task not
 * yet ended and waits for its submission to settle.
 */
function gateScenario(tasks: readonly (readonly [name: string, kind: 'read' | 'write'])[]) {
  const gate = new TopologyGate();
  const log: string[] = [];
  const pending = tasks.map(([name, kind]) => {
    const t = task(log, name);
    return { end: t.end, done: kind === 'read' ? gate.read(t.fn) : gate.write(t.fn) };
  });
  return {
    log: async () => {
      await tick();
      return [...log];
    },
    endNext: async () => {
      const next = pending.shift();
      if (!next) throw new Error('every task has ended');
      next.end();
      await next.done;
    },
  };
}

describe('topology gate', () => {
  it('lets attaches overlap, and holds a notifying command until every attach in progress is done', async () => {
    const s = gateScenario([
      ['a', 'read'],
      ['b', 'read'],
      ['w', 'write'],
    ]);
    expect(await s.log()).toEqual(['a+', 'b+']);
    await s.endNext();
    expect(await s.log()).toEqual(['a+', 'b+', 'a-']);
    await s.endNext();
    expect(await s.log()).toEqual(['a+', 'b+', 'a-', 'b-', 'w+']);
    await s.endNext();
  });

  it('holds a new attach back while a notifying command runs, in arrival order', async () => {
    const s = gateScenario([
      ['w', 'write'],
      ['a', 'read'],
      ['w2', 'write'],
    ]);
    expect(await s.log()).toEqual(['w+']);
    await s.endNext();
    expect(await s.log()).toEqual(['w+', 'w-', 'a+']);
    await s.endNext();
    expect((await s.log()).at(-1)).toBe('w2+');
    await s.endNext();
  });

  it('a failing task releases the gate', async () => {
    const gate = new TopologyGate();
    await expect(gate.write(() => Promise.reject(new Error('tmux said no')))).rejects.toThrow('tmux said no');
    await expect(gate.read(() => Promise.resolve(7))).resolves.toBe(7);
  });

  it('knows which commands notify control clients', () => {
    expect(
      makesNotifications([
        ['new-session', '-d'],
        ['set-option', 'x'],
      ]),
    ).toBe(true);
    expect(makesNotifications([['kill-session', '-t', '=a']])).toBe(true);
    expect(
      makesNotifications([
        ['display-message', '-p', 'x'],
        ['capture-pane', '-p'],
      ]),
    ).toBe(false);
    expect(makesNotifications([['send-keys', '-H', '41']])).toBe(false);
  });
});
