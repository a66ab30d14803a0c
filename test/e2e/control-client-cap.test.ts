/**
 * A control client never lets its commands pile up in tmux (#47; tmux #5553: a control client
 * that does not read its replies makes the server buffer them without limit). Every reply is read,
 * and past MAX_PENDING_COMMANDS in flight a caller gets an error at once instead of a queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient, MAX_PENDING_COMMANDS } from '../../src/tmux/control/control-client.js';
import { privateTmux, type PrivateTmux } from '../helpers/tmux.js';

describe('a control client with commands in flight', () => {
  let tmux: PrivateTmux;
  let client: ControlClient;
  let closed: string | null = null;

  beforeAll(async () => {
    tmux = await privateTmux();
    await tmux.tmux('new-session', '-d', '-s', 'cap', '-x', '80', '-y', '24');
    client = ControlClient.attach({
      target: tmux.target,
      session: 'cap',
      onEvent: () => undefined,
      onClose: (c) => (closed = c.reason),
    });
    await client.attached;
  });
  afterAll(async () => {
    client.close();
    await client.gone;
    await tmux.cleanup();
  });

  it('refuses the command past the cap at once, answers every one before it, and takes commands again once they are answered', async () => {
    const inFlight = Array.from({ length: MAX_PENDING_COMMANDS }, (_, i) => client.run(`display-message -p n${i}`));
    await expect(client.run('display-message -p one-too-many')).rejects.toThrow('too many tmux commands in flight');
    await expect(client.commandList(['display-message -p a', 'display-message -p b'])).rejects.toThrow('too many tmux commands in flight');
    const replies = await Promise.all(inFlight);
    expect(replies.map((r) => r.toString('utf8').trim())).toEqual(inFlight.map((_, i) => `n${i}`));
    expect((await client.run('display-message -p again')).toString('utf8').trim()).toBe('again');
    expect(closed).toBeNull();
  });
});
