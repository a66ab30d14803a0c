/**
 * Push end to end through `tether serve`: phones paired with `tether pair` + `POST /pair`
 * (one sandbox, one production build), the agent reaching awaiting-input over the agent
 * socket (the extension's channel), and a real HTTP/2 TLS stand-in for both APNs endpoints
 * that verifies the provider token with the public key. What a phone would get is what is
 * checked: one alert per background device, on its environment's endpoint, none while its
 * stream is live, again once that stream went silent, and none after APNs said 410.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fakeAgent, type FakeAgent } from '../helpers/agent-socket.js';
import { pushToml, TEST_KEY_ID, TEST_TEAM_ID, type FakeApns } from '../../testkit/apns-server.js';
import { runCli } from '../helpers/daemon.js';
import { useApnsStandIns } from '../helpers/apns-fixture.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pairDevice, type PairedDevice } from '../helpers/pair-device.js';
import { eventually } from '../helpers/tmux.js';

const TEAM = TEST_TEAM_ID;
const KID = TEST_KEY_ID;
const PHONE_A = 'a1'.repeat(32);
const PHONE_B = 'b2'.repeat(32);

describe('push through the daemon', () => {
  let agent: FakeAgent;
  const paired: Record<'A' | 'B', PairedDevice> = {} as never;

  // The stand-in APNs servers come first (the config names their URLs) and go after the daemon.
  const apns = useApnsStandIns('tether-push-e2e-');
  const fx = useDaemon(
    () =>
      [
        '[agent]',
        'command = "/bin/cat"',
        '[stream]',
        'ping_interval_s = 1',
        ...pushToml(apns.sandbox.url, apns.keyPath, apns.production.url),
        '',
      ].join('\n'),
    { extraEnv: () => ({ NODE_EXTRA_CA_CERTS: apns.caFile }) },
  );

  /** The agent finishes a turn and waits for its human. */
  const turn = () => {
    agent.event('agent.start');
    agent.event('agent.end', { idle: true });
  };
  const sentTo = (fake: FakeApns, deviceToken: string) => fake.requests.filter((r) => r.deviceToken === deviceToken).length;

  beforeAll(async () => {
    paired.A = await pairDevice(fx, 'dev phone', PHONE_A, 'sandbox');
    paired.B = await pairDevice(fx, 'release phone', PHONE_B, 'production');
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', 'pi-main', '#{pane_id}')).trim();
    agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    expect((await agent.welcomed).type).toBe('welcome');
  }, 60_000);
  // Registered after the fixture: the agent's socket closes before the daemon is killed.
  afterAll(() => agent?.close());

  it('health shows push configured', async () => {
    const h = (await (await fx.d.get('/health')).json()) as { push: { configured: boolean }; warnings: string[] };
    expect(h.push.configured).toBe(true);
    expect(h.warnings.join(' ')).not.toMatch(/push is not configured/);
  });

  it('awaiting-input sends exactly one alert to each background device, on its own endpoint, with every header', async () => {
    turn();
    await eventually(() => sentTo(apns.sandbox, PHONE_A) === 1 && sentTo(apns.production, PHONE_B) === 1, 15_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(apns.sandbox.requests.map((r) => r.deviceToken)).toEqual([PHONE_A]);
    expect(apns.production.requests.map((r) => r.deviceToken)).toEqual([PHONE_B]);
    for (const req of [apns.sandbox.requests[0]!, apns.production.requests[0]!]) {
      expect(req.jwtError).toBeNull();
      expect(req.jwtHeader).toMatchObject({ alg: 'ES256', kid: KID });
      expect(req.claims.iss).toBe(TEAM);
      expect(req.headers['apns-topic']).toBe('dev.tether.app');
      expect(req.headers['apns-push-type']).toBe('alert');
      expect(req.headers['apns-priority']).toBe('10');
      expect(req.headers['apns-collapse-id']).toBe('session-pi-main');
      expect(Number(req.headers['apns-expiration'])).toBeGreaterThan(Date.now() / 1000);
      expect(req.body.length).toBeLessThan(4096);
      const payload = req.payload as { aps: { alert: { title: string; body: string } }; sessionId: string };
      expect(payload.aps.alert.title).toMatch(/pi is waiting/);
      expect(payload.aps.alert.body).toContain('pi-main');
      expect(payload.sessionId).toBe('pi-main');
    }
    // The same state again (an agent reconnecting while it waits) alerts nobody.
    agent.event('agent.end', { idle: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(apns.sandbox.requests.length + apns.production.requests.length).toBe(2);
  });

  it('a device with a live stream gets nothing; once its stream goes silent past the ping deadline, it does', async () => {
    apns.sandbox.requests.length = 0;
    apns.production.requests.length = 0;
    // Phone A in the foreground, but it will stop answering pings (the phone went to sleep).
    const ws = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/sessions/pi-main/stream`, {
      headers: { authorization: `Bearer ${paired.A.token}` },
      autoPong: false,
    });
    await new Promise((resolve, reject) => {
      ws.once('message', resolve);
      ws.once('error', reject);
    });
    turn();
    await eventually(() => sentTo(apns.production, PHONE_B) === 1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(sentTo(apns.sandbox, PHONE_A)).toBe(0);

    // Silent past its deadline (ping every 1 s): it no longer counts as in the foreground.
    await new Promise((r) => setTimeout(r, 3500));
    turn();
    await eventually(() => sentTo(apns.sandbox, PHONE_A) === 1 && sentTo(apns.production, PHONE_B) === 2, 15_000);
    ws.terminate();
  });

  it('a 410 removes the mapping: the next alert does not go to that device; registering again brings it back', async () => {
    apns.sandbox.requests.length = 0;
    apns.production.requests.length = 0;
    apns.sandbox.answer = (req) => (req.deviceToken === PHONE_A ? { status: 410, reason: 'Unregistered' } : { status: 200 });
    turn();
    await eventually(() => sentTo(apns.sandbox, PHONE_A) === 1 && sentTo(apns.production, PHONE_B) === 1, 15_000);
    await eventually(async () => (await runCli(['auth', 'list'], fx.home.env)).stdout.includes('dev phone (sandbox, removed)'), 15_000);

    apns.sandbox.answer = () => ({ status: 200 });
    turn();
    await eventually(() => sentTo(apns.production, PHONE_B) === 2, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(sentTo(apns.sandbox, PHONE_A)).toBe(1);

    // The app registers again at its next launch.
    const again = await fetch(`${fx.d.base}/device`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${paired.A.token}` },
      body: JSON.stringify({ deviceToken: PHONE_A, environment: 'sandbox', deviceName: 'dev phone' }),
    });
    expect(again.status).toBe(200);
    turn();
    await eventually(() => sentTo(apns.sandbox, PHONE_A) === 2, 15_000);
  });
});
