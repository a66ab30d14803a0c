/**
 * The connection registry's account of each device's comings and goings, on a clock the test
 * moves: a device is away from when its last stream or side connection goes until its next one
 * comes; a second connection of the same device going is not an absence; /ops viewers are not
 * devices; a socket that is not alive is not listed; a revoked token's device is forgotten.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionRegistry, MAX_DEVICES_REMEMBERED, type RegisteredConnection } from '../../src/transport/stream/connections.js';

function conn(tokenId: string, kind: RegisteredConnection['kind'] = 'stream', alive = () => true): RegisteredConnection {
  return {
    tokenId,
    sessionId: kind === 'ops' ? '' : 'pi-main',
    kind,
    close: () => undefined,
    alive,
    figures: () => ({
      device: `dev-${tokenId}`,
      actor: kind === 'stream' ? 'session:pi-main/client#1' : null,
      state: kind === 'stream' ? 'live' : null,
      connectedAt: '2026-11-25T08:00:00.000Z',
      connectedS: 1,
      rttMs: 50,
      srttMs: 50,
      bytesSent: 10,
    }),
  };
}

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('ConnectionRegistry', () => {
  it('counts a device coming back as a reconnect, with the time it was away', () => {
    const c = clock();
    const reg = new ConnectionRegistry(c.now);
    const drop = reg.add(conn('a'));
    expect(reg.clients()[0]).toMatchObject({ device: 'dev-a', reconnects: 0, awayMs: 0, lastAwayMs: null });
    c.advance(500);
    drop();
    expect(reg.clients()).toEqual([]);
    c.advance(2500);
    const drop2 = reg.add(conn('a'));
    expect(reg.clients()[0]).toMatchObject({ reconnects: 1, awayMs: 2500, lastAwayMs: 2500 });
    drop2();
    c.advance(700);
    reg.add(conn('a', 'side'));
    expect(reg.clients()[0]).toMatchObject({ kind: 'side', reconnects: 2, awayMs: 3200, lastAwayMs: 700 });
  });

  it('a device with another connection open is not away; other devices and /ops viewers do not matter', () => {
    const c = clock();
    const reg = new ConnectionRegistry(c.now);
    const stream = reg.add(conn('a'));
    reg.add(conn('a', 'side'));
    const viewer = reg.add(conn('a', 'ops'));
    const other = reg.add(conn('b'));
    stream();
    other();
    viewer();
    c.advance(1000);
    reg.add(conn('a'));
    expect(
      reg
        .clients()
        .filter((x) => x.tokenId === 'a')
        .map((x) => x.reconnects),
    ).toEqual([0, 0]);
    expect(reg.count({ liveOnly: true })).toBe(2);
  });

  it('lists and counts only live sockets, and says when a stream client is behind', () => {
    const reg = new ConnectionRegistry(clock().now);
    let up = true;
    const behind: RegisteredConnection = { ...conn('a'), figures: () => ({ ...conn('a').figures!(), state: 'behind' }) };
    reg.add(behind);
    reg.add(conn('b', 'stream', () => up));
    expect(reg.clients().map((x) => [x.tokenId, x.behind])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    up = false;
    expect(reg.clients().map((x) => x.tokenId)).toEqual(['a']);
    expect(reg.count({ kind: 'stream', liveOnly: true })).toBe(1);
  });

  it('forgets a revoked device; remembers a bounded number of devices', () => {
    const c = clock();
    const reg = new ConnectionRegistry(c.now);
    reg.add(conn('a'))();
    reg.closeToken('a');
    reg.add(conn('a'));
    expect(reg.clients()[0]?.reconnects).toBe(0);

    const many = new ConnectionRegistry(c.now);
    many.add(conn('first'))();
    for (let i = 0; i < MAX_DEVICES_REMEMBERED; i++) many.add(conn(`d${i}`))();
    // The one gone longest was forgotten: its return is a first arrival.
    many.add(conn('first'));
    expect(many.clients()[0]?.reconnects).toBe(0);
    many.add(conn('d999'));
    expect(many.clients().find((x) => x.tokenId === 'd999')?.reconnects).toBe(1);
  });
});
