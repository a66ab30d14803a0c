/**
 * The workbench's rules (src/service/workbench/workbench-upkeep.ts) without a daemon: what a history answer
 * says of the disk buffer, and which sessions the uploads and history serve.
 */
import { describe, expect, it } from 'vitest';
import { bufferNote, hasHistory, uploadTargetState } from '../../src/service/workbench/workbench-upkeep.js';

type Buffers = Parameters<typeof bufferNote>[0];
const buffers = (own: ReturnType<Buffers['sessionState']>, global: ReturnType<Buffers['status']>): Buffers => ({
  sessionState: () => own,
  status: () => global,
});

describe("a history answer's note on the disk buffer", () => {
  it('says off, with the reason, when the buffers are off, whatever the session', () => {
    const off = { state: 'off', reason: 'disk_buffer = false' } as unknown as ReturnType<Buffers['status']>;
    expect(bufferNote(buffers('writing', off), 's')).toEqual({ state: 'off', reason: 'disk_buffer = false' });
  });
  it('says stopped at the cap, none without a live buffer, writing otherwise', () => {
    const on = { state: 'writing', reason: null } as unknown as ReturnType<Buffers['status']>;
    const stopped = bufferNote(buffers('stopped', on), 's');
    expect(stopped.state).toBe('stopped');
    expect(stopped.reason).toContain('session_cap_mb');
    const none = bufferNote(buffers(null, on), 's');
    expect(none.state).toBe('none');
    expect(none.reason).toContain('no live disk buffer');
    expect(bufferNote(buffers('writing', on), 's')).toEqual({ state: 'writing', reason: null });
  });
});

describe('which sessions the workbench serves', () => {
  const system = (known: boolean, exited: boolean | null) => ({
    knows: () => Promise.resolve(known),
    session: () => (exited === null ? null : ({ exited } as never)),
  });
  it("an upload's session: running or exited when known, else unknown", async () => {
    expect(await uploadTargetState(system(true, false), 's')).toBe('running');
    expect(await uploadTargetState(system(true, true), 's')).toBe('exited');
    expect(await uploadTargetState(system(false, false), 's')).toBeNull();
    expect(await uploadTargetState(system(true, null), 's')).toBeNull();
  });
  it('a history: a known session, or one kept as unrestorable', async () => {
    expect(await hasHistory(system(true, false), () => false, 's')).toBe(true);
    expect(await hasHistory(system(false, null), () => true, 's')).toBe(true);
    expect(await hasHistory(system(false, null), () => false, 's')).toBe(false);
  });
});
