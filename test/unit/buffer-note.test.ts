/**
 * What a history or search answer says of the session's disk buffer (src/service/buffer-note.ts),
 * and which session an upload or a history read finds (src/service/uploads.service.ts,
 * src/service/history.service.ts): pure lookups over stand-ins for the buffers and the system.
 */
import { describe, expect, it } from 'vitest';
import type { DiskBufferStatus } from '../../src/actors/disk-buffer.actor.js';
import { bufferNote } from '../../src/service/buffer-note.js';
import { historyReadable } from '../../src/service/history.service.js';
import { uploadSessionState } from '../../src/service/uploads.service.js';

const buffers = (global: DiskBufferStatus, own: string | null) => ({ status: () => global, sessionState: () => own });
const writing: DiskBufferStatus = { state: 'writing', reason: null } as DiskBufferStatus;

describe('bufferNote', () => {
  it('says the buffer is off, with the global reason, before anything of the session', () => {
    const off = { state: 'off', reason: 'the disk has less than 1 GiB free' } as DiskBufferStatus;
    expect(bufferNote(buffers(off, 'stopped'), 'w1')).toEqual({ state: 'off', reason: 'the disk has less than 1 GiB free' });
  });

  it("says in words why a session's buffer is not written", () => {
    expect(bufferNote(buffers(writing, 'stopped'), 'w1')).toEqual({
      state: 'stopped',
      reason: "the session's disk buffer reached session_cap_mb: later output was not kept",
    });
    expect(bufferNote(buffers(writing, null), 'w1')).toEqual({
      state: 'none',
      reason: 'the session has no live disk buffer: what is answered is what was kept',
    });
    expect(bufferNote(buffers(writing, 'writing'), 'w1')).toEqual({ state: 'writing', reason: null });
  });
});

describe('uploadSessionState', () => {
  const system = (known: boolean, session: { exited: boolean } | null) => ({
    knows: () => Promise.resolve(known),
    session: () => session as never,
  });

  it('is running or exited for a known session, null for an unknown one', async () => {
    expect(await uploadSessionState(system(true, { exited: false }), 'w1')).toBe('running');
    expect(await uploadSessionState(system(true, { exited: true }), 'w1')).toBe('exited');
    expect(await uploadSessionState(system(false, { exited: false }), 'w1')).toBeNull();
    expect(await uploadSessionState(system(true, null), 'w1')).toBeNull();
  });
});

describe('historyReadable', () => {
  it('reads a session kept as unrestorable without asking the system, else what the system knows', async () => {
    const asked: string[] = [];
    const knows = (known: boolean) => (id: string) => (asked.push(id), Promise.resolve(known));
    expect(await historyReadable(() => true, knows(false), 'gone')).toBe(true);
    expect(asked).toEqual([]);
    expect(await historyReadable(() => false, knows(true), 'w1')).toBe(true);
    expect(await historyReadable(() => false, knows(false), 'w2')).toBe(false);
    expect(asked).toEqual(['w1', 'w2']);
  });
});
