/**
 * pi's stops (docs/api.md "Stops", docs/agents.md "Stops"): the real pi with the tether extension
 * in the daemon's default session, driven by the fake model, a phone paired to the HTTP/2 TLS
 * stand-in for APNs (in the background), and a stream client. A turn that ends is `done` (its
 * "waiting" push, no other); a turn whose model API refuses it (a 401, which pi does not retry)
 * is `error` with pi's words and its own push; pi killed by a signal is `exited`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pushToml } from '../../testkit/apns-server.js';
import { pushedOnce } from '../helpers/agent-stops.js';
import { useApnsStandIns } from '../helpers/apns-fixture.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { useFakePi } from '../helpers/fake-pi-fixture.js';
import { lastOfRole, messageText } from '../helpers/fake-model.js';
import { pairDevice } from '../helpers/pair-device.js';
import { stateFrames, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Stop } from '../../src/protocol/frames.js';

const PI_START_MS = 60_000;
const TURN_MS = 45_000;
const POLL_MS = 50;
const PHONE = 'b9'.repeat(32);

describe("pi's stops: done, an API error, a signal", () => {
  const stand = useApnsStandIns('tether-stops-pi-');
  const fp = useFakePi((req) => {
    const asked = messageText(lastOfRole(req, 'user'));
    return asked.includes('refuse me') ? { status: 401 } : { text: `You said: ${asked.slice(0, 40)}` };
  });
  const fx = useDaemon(
    () =>
      ['[agent]', 'default_session = "pi-main"', 'naming_model = ""', ...pushToml(stand.apns.sandbox.url, stand.apns.keyPath), ''].join(
        '\n',
      ),
    {
      extraEnv: () => ({ ...fp.pi.env, NODE_EXTRA_CA_CERTS: stand.apns.caFile }),
      startTimeoutMs: 30_000,
      setupTimeoutMs: 60_000,
    },
  );
  let m: Mirror;
  beforeAll(async () => {
    await pairDevice(fx, 'phone', PHONE, 'sandbox');
    m = fx.mirror('pi-main');
  }, 60_000);

  const item = async () =>
    ((await (await fx.d.get('/sessions')).json()) as { id: string; agentState: string | null; stop: Stop | null }[]).find(
      (s) => s.id === 'pi-main',
    );
  const type = async (text: string) => {
    const post = (body: unknown) =>
      fx.d.get('/sessions/pi-main/input', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ type: 'keys', data: text })).status).toBe(204);
    expect((await post({ type: 'key', name: 'enter' })).status).toBe(204);
  };
  const pushes = () =>
    stand.apns.sandbox.requests.map(
      (q) => q.payload as { aps: { alert: { title: string; body: string }; category?: string }; stopId?: string },
    );

  it('a turn that ends: done on the state frame and in the list, the "waiting" push alone', { timeout: 120_000 }, async () => {
    await eventually(async () => (await item())?.agentState === 'idle', PI_START_MS, 200, 'pi ready');
    const before = stand.apns.sandbox.requests.length;
    await type('hello there');
    await eventually(async () => (await item())?.stop?.kind === 'done', TURN_MS, POLL_MS, 'the done stop in the list');
    const stop = (await item())!.stop!;
    expect(stop).toMatchObject({ kind: 'done', agent: 'pi', message: '' });
    await eventually(() => stateFrames(m).some((f) => f.stop?.id === stop.id), 10_000, POLL_MS, 'the done stop on the stream');
    expect(stateFrames(m).at(-1)).toMatchObject({ value: 'awaiting-input', stop });
    await eventually(() => stand.apns.sandbox.requests.length > before, 30_000, POLL_MS, 'the push');
    expect(
      pushes()
        .slice(before)
        .map((p) => p.aps.alert.title),
    ).toEqual(['pi is waiting for you']);
  });

  it(
    "a model API that refuses the turn: the error stop with pi's words, one push with them; the next turn clears it",
    { timeout: 120_000 },
    async () => {
      const before = stand.apns.sandbox.requests.length;
      await type('refuse me');
      await eventually(async () => (await item())?.stop?.kind === 'error', TURN_MS, POLL_MS, 'the error stop in the list');
      const stop = (await item())!.stop!;
      expect(stop.agent).toBe('pi');
      expect(stop.message).toContain('401');
      await eventually(() => stateFrames(m).some((f) => f.stop?.id === stop.id), 10_000, POLL_MS, 'the error stop on the stream');
      expect(stateFrames(m).at(-1)).toMatchObject({ value: 'awaiting-input', stop });
      await pushedOnce(stand.apns, before, stop.id);
      expect(pushes()[before]).toMatchObject({
        aps: { alert: { title: 'pi stopped on an error', body: stop.message }, category: 'TETHER_STOPPED_ERROR' },
      });

      await type('hello again');
      await eventually(async () => (await item())?.stop?.kind === 'done', TURN_MS, POLL_MS, 'a new turn, done');
    },
  );

  it('pi killed by a signal: the exited stop in the list names it', { timeout: 60_000 }, async () => {
    const pid = Number((await fx.tmux.tmux('display-message', '-p', '-t', '=pi-main:', '#{pane_pid}')).trim());
    process.kill(pid, 'SIGKILL');
    await eventually(async () => (await item())?.stop?.kind === 'exited', 20_000, POLL_MS, 'the exited stop');
    expect(await item()).toMatchObject({
      agentState: null,
      stop: { kind: 'exited', agent: 'pi', signal: 'SIGKILL', message: 'killed by SIGKILL' },
    });
  });
});
