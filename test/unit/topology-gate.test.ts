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

describe('topology gate', () => {
  it('lets attaches overlap, and holds a notifying command until every attach in progress is done', async () => {
    const gate = new TopologyGate();
    const log: string[] = [];
    const a = task(log, 'a');
    const b = task(log, 'b');
    const w = task(log, 'w');
    const pa = gate.read(a.fn);
    const pb = gate.read(b.fn);
    const pw = gate.write(w.fn);
    await tick();
    expect(log).toEqual(['a+', 'b+']);
    a.end();
    await pa;
    await tick();
    expect(log).toEqual(['a+', 'b+', 'a-']);
    b.end();
    await pb;
    await tick();
    expect(log).toEqual(['a+', 'b+', 'a-', 'b-', 'w+']);
    w.end();
    await pw;
  });

  it('holds a new attach back while a notifying command runs, in arrival order', async () => {
    const gate = new TopologyGate();
    const log: string[] = [];
    const w = task(log, 'w');
    const a = task(log, 'a');
    const w2 = task(log, 'w2');
    const pw = gate.write(w.fn);
    const pa = gate.read(a.fn);
    const pw2 = gate.write(w2.fn);
    await tick();
    expect(log).toEqual(['w+']);
    w.end();
    await pw;
    await tick();
    expect(log).toEqual(['w+', 'w-', 'a+']);
    a.end();
    await pa;
    await tick();
    expect(log.at(-1)).toBe('w2+');
    w2.end();
    await pw2;
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
