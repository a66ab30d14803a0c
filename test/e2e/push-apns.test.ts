/**
 * The push subsystem against a real HTTP/2 TLS server standing in for both APNs endpoints:
 * headers, payload, endpoint per environment, provider-token reuse and renewal on an injected
 * clock, 410 removing the device, retries only where APNs asks for them.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Ask } from '../../src/protocol/frames.js';
import { silentLogger } from '../../src/log.js';
import {
  MAX_BODY_CHARS,
  preparePush,
  PushService,
  type PushConfig,
  type PushDevice,
  type PushSettings,
} from '../../src/push/push.service.js';
import { startApnsStandIns, type FakeApns } from '../../testkit/apns-server.js';
import { eventually } from '../helpers/tmux.js';

const TEAM = 'TEAM123456';
const KID = 'KEY7654321';
const MIN = 60_000;

describe('push to APNs', () => {
  let dir: string;
  let keyPath: string;
  let sandbox: FakeApns;
  let production: FakeApns;
  let settings: PushSettings;
  let clock: number;
  let devices: PushDevice[];
  let foreground: Set<string>;
  let services: PushService[] = [];

  const config = (over: Partial<PushConfig> = {}): PushConfig => ({
    team_id: TEAM,
    key_id: KID,
    key_path: keyPath,
    bundle_id: 'com.example.tether',
    sandbox_url: sandbox.url,
    production_url: production.url,
    ...over,
  });
  /** Asks whose alerts may still go out (the others were answered meanwhile). */
  let openAsks: Set<string>;
  const service = () => {
    const s = new PushService({
      askOpen: (_id, askId) => openAsks.has(askId),
      settings,
      devices: { list: () => devices, remove: (t) => void (devices = devices.filter((d) => d.deviceToken !== t)) },
      inForeground: (tokenId) => foreground.has(tokenId),
      describe: (id) => (id === 'gone' ? null : { name: id, description: 'fix the login bug' }),
      agentName: 'pi',
      now: () => clock,
      log: silentLogger,
      ca: `${sandbox.certPem}\n${production.certPem}`,
    });
    services.push(s);
    return s;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tether-push-'));
    ({ keyPath, sandbox, production } = await startApnsStandIns(dir, { teamId: TEAM, keyId: KID }));
    settings = await preparePush(config(), '/etc/tether/config.toml');
  });
  afterAll(async () => {
    await sandbox.close();
    await production.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const s of services) s.stop();
    services = [];
    sandbox.requests.length = 0;
    production.requests.length = 0;
    sandbox.answer = () => ({ status: 200 });
    production.answer = () => ({ status: 200 });
    clock = Date.UTC(2026, 10, 23, 12);
    devices = [
      { tokenId: 'tok-a', deviceToken: 'a'.repeat(64), environment: 'sandbox', deviceName: 'dev phone' },
      { tokenId: 'tok-b', deviceToken: 'b'.repeat(64), environment: 'production', deviceName: 'my phone' },
    ];
    foreground = new Set();
    openAsks = new Set();
  });

  it('sends one alert per background device, to its environment, with every header and a small payload', async () => {
    const push = service();
    push.awaitingInput('pi-main');
    await eventually(() => sandbox.requests.length === 1 && production.requests.length === 1, 15_000, 20);
    for (const [server, device] of [
      [sandbox, devices[0]!],
      [production, devices[1]!],
    ] as const) {
      const req = server.requests[0]!;
      expect(req.path).toBe(`/3/device/${device.deviceToken}`);
      expect(req.jwtError).toBeNull();
      expect(req.jwtHeader).toMatchObject({ alg: 'ES256', kid: KID });
      expect(req.claims.iss).toBe(TEAM);
      expect(req.claims.iat).toBe(Math.floor(clock / 1000));
      expect(req.headers['apns-topic']).toBe('com.example.tether');
      expect(req.headers['apns-push-type']).toBe('alert');
      expect(req.headers['apns-priority']).toBe('10');
      expect(req.headers['apns-collapse-id']).toBe('session-pi-main');
      expect(Number(req.headers['apns-expiration'])).toBeGreaterThan(clock / 1000);
      expect(req.body.length).toBeLessThan(4096);
      expect(req.payload).toMatchObject({
        aps: { alert: { title: 'pi is waiting for you', body: 'pi-main: fix the login bug' } },
        sessionId: 'pi-main',
      });
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(sandbox.requests.length + production.requests.length).toBe(2);
    expect(push.status()).toMatchObject({ configured: true, sent: 2, failed: 0, lastError: null });
  });

  it('sends nothing to a device in the foreground', async () => {
    foreground.add('tok-a');
    service().awaitingInput('pi-main');
    await eventually(() => production.requests.length === 1, 15_000, 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(sandbox.requests).toHaveLength(0);
  });

  it('reuses one provider token, makes a new one after 55 minutes, and none sooner', async () => {
    const push = service();
    devices = devices.slice(0, 1);
    for (let i = 0; i < 5; i++) {
      push.awaitingInput(`s${i}`);
      clock += 10 * MIN; // 0, 10, 20, 30, 40 minutes
      await eventually(() => sandbox.requests.length === i + 1, 15_000, 20);
    }
    expect(new Set(sandbox.requests.map((r) => r.jwt)).size).toBe(1);
    clock += 15 * MIN; // 65 minutes after the first
    push.awaitingInput('later');
    await eventually(() => sandbox.requests.length === 6, 15_000, 20);
    expect(new Set(sandbox.requests.map((r) => r.jwt)).size).toBe(2);
    expect(push.providerTokensIssued).toBe(2);
  });

  it('pushes that go out at the same moment carry one provider token, on the first push and on a renewal', async () => {
    const push = service();
    devices = Array.from({ length: 8 }, (_, i): PushDevice => ({
      tokenId: `tok-${i}`,
      deviceToken: String(i).repeat(64),
      environment: i % 2 === 0 ? 'sandbox' : 'production',
      deviceName: `phone ${i}`,
    }));
    // Three sessions start waiting in the same tick, right after start: 24 pushes, nothing signed yet.
    for (const id of ['one', 'two', 'three']) push.awaitingInput(id);
    const all = () => [...sandbox.requests, ...production.requests];
    await eventually(() => all().length === 24, 15_000, 20);
    expect(all().every((r) => r.jwtError === null)).toBe(true);
    expect(new Set(all().map((r) => r.jwt)).size).toBe(1);
    expect(push.providerTokensIssued).toBe(1);
    // 25 minutes on, APNs calls that token expired for the eight pushes of the next alert: the
    // pushes that meet the refusal renew once between them, the rest go out with the new token.
    const first = all()[0]!.jwt;
    const expired = (r: { jwt: string }) => (r.jwt === first ? { status: 403, reason: 'ExpiredProviderToken' } : { status: 200 });
    sandbox.answer = expired;
    production.answer = expired;
    clock += 25 * MIN;
    push.awaitingInput('four');
    const renewedTo = () =>
      new Set(
        all()
          .filter((r) => r.jwt !== first)
          .map((r) => r.path),
      );
    await eventually(() => renewedTo().size === 8, 15_000, 20);
    expect(
      new Set(
        all()
          .filter((r) => r.jwt !== first)
          .map((r) => r.jwt),
      ).size,
    ).toBe(1);
    // The stand-in has answered the last of them; the service counts each once its answer is read.
    await eventually(() => push.status().sent === 32, 15_000, 20, 'the service to count 32 pushes sent');
    expect(push.providerTokensIssued).toBe(2);
  });

  it('renews once on ExpiredProviderToken, but never sooner than 20 minutes after the last token', async () => {
    const push = service();
    devices = devices.slice(0, 1);
    push.awaitingInput('one');
    await eventually(() => sandbox.requests.length === 1, 15_000, 20);
    const first = sandbox.requests[0]!.jwt;
    // APNs calls that token expired, 25 minutes in: one new token, one retry.
    sandbox.answer = (r) => (r.jwt === first ? { status: 403, reason: 'ExpiredProviderToken' } : { status: 200 });
    clock += 25 * MIN;
    push.awaitingInput('two');
    await eventually(() => sandbox.requests.length === 3, 15_000, 20);
    expect(sandbox.requests[2]!.jwt).not.toBe(first);
    expect(push.providerTokensIssued).toBe(2);
    // Calling the new one expired 5 minutes later gets no new token (too soon), and no loop.
    const second = sandbox.requests[2]!.jwt;
    sandbox.answer = () => ({ status: 403, reason: 'ExpiredProviderToken' });
    clock += 5 * MIN;
    push.awaitingInput('three');
    await eventually(() => sandbox.requests.length === 4, 15_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.requests).toHaveLength(4);
    expect(sandbox.requests[3]!.jwt).toBe(second);
    expect(push.providerTokensIssued).toBe(2);
    expect(push.status().lastError).toMatchObject({ status: 403, reason: 'ExpiredProviderToken' });
  });

  it('removes a device APNs calls unregistered (410): the next alert does not go to it', async () => {
    const push = service();
    sandbox.answer = () => ({ status: 410, reason: 'Unregistered' });
    push.awaitingInput('pi-main');
    await eventually(() => devices.length === 1, 15_000, 20);
    expect(devices.map((d) => d.tokenId)).toEqual(['tok-b']);
    push.awaitingInput('pi-main');
    await eventually(() => production.requests.length === 2, 15_000, 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(sandbox.requests).toHaveLength(1);
  });

  it('does not retry a 400, retries a 503 until it goes through', async () => {
    const push = service();
    sandbox.answer = () => ({ status: 400, reason: 'BadDeviceToken' });
    let calls = 0;
    production.answer = () => (++calls < 2 ? { status: 503, reason: 'ServiceUnavailable' } : { status: 200 });
    push.awaitingInput('pi-main');
    await eventually(() => production.requests.length === 2, 15_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.requests).toHaveLength(1);
    expect(push.status()).toMatchObject({ sent: 1, failed: 2 });
  });

  it('says what happened: an exit with its status, a kill as a crash with the signal, an unrestorable session with its reason', async () => {
    const push = service();
    devices = devices.slice(0, 1);
    const got = () => sandbox.requests.map((r) => (r.payload as { aps: { alert: { title: string; body: string } } }).aps.alert);
    push.alert('w1', { kind: 'agent-exited', status: 3, signal: null });
    await eventually(() => sandbox.requests.length === 1, 15_000, 20);
    push.alert('w2', { kind: 'agent-exited', status: null, signal: 9 });
    await eventually(() => sandbox.requests.length === 2, 15_000, 20);
    // No tmux session to read the label from: the caller names it. A long reason survives the cut.
    const reason = `its directory /home/me/${'deep/'.repeat(20)}w3 is gone`;
    push.alert('gone', { kind: 'unrestorable', reason }, { name: 'gone', description: 'x'.repeat(300) });
    await eventually(() => sandbox.requests.length === 3, 15_000, 20);
    expect(got().slice(0, 2)).toEqual([
      { title: 'pi exited with status 3', body: 'w1: fix the login bug' },
      { title: 'pi crashed: killed by SIGKILL', body: 'w2: fix the login bug' },
    ]);
    const last = got()[2]!;
    expect(last.title).toBe('A session could not be restored');
    expect(last.body.startsWith('gone: xxx')).toBe(true);
    expect(last.body.endsWith(` — ${reason}`)).toBe(true);
    expect([...last.body].length).toBeLessThanOrEqual(MAX_BODY_CHARS);
    expect((sandbox.requests[2]!.payload as { sessionId: string }).sessionId).toBe('gone');
    expect(sandbox.requests[2]!.headers['apns-collapse-id']).toBe('session-gone');
  });

  it('an ask: who asks for what, the session, the command; its id, category and choices; time-sensitive; under 4 KB at its largest', async () => {
    const push = service();
    devices = devices.slice(0, 1);
    const ask = (over: Partial<Ask>): Ask => ({
      id: '0f6c3a8e-6a43-4d0b-9d0e-5a3c2b1f7e21',
      kind: 'permission',
      agent: 'claude',
      tool: 'Bash',
      concern: 'npm test',
      choices: [
        { id: 'yes', label: 'Yes' },
        { id: 'no', label: 'No, and tell Claude what to do differently' },
      ],
      askedAt: '2026-11-23T12:00:00.000Z',
      ...over,
    });
    openAsks = new Set(['a1', 'a2', 'a3', 'a4']);
    const payloads = () => sandbox.requests.map((r) => r.payload as { aps: Record<string, unknown>; askId?: string; choices?: unknown[] });
    push.alert('w1', { kind: 'awaiting-input', ask: ask({ id: 'a1' }) }, { name: 'w1', description: 'fix it', agentLabel: 'Claude' });
    await eventually(() => sandbox.requests.length === 1, 15_000, 20);
    expect(payloads()[0]).toEqual({
      aps: {
        alert: { title: 'Claude asks to use Bash', subtitle: 'w1: fix it', body: 'npm test' },
        sound: 'default',
        'thread-id': 'session-w1',
        category: 'TETHER_ASK_PERMISSION',
        'interruption-level': 'time-sensitive',
      },
      sessionId: 'w1',
      askId: 'a1',
      choices: [
        { id: 'yes', label: 'Yes' },
        { id: 'no', label: 'No, and tell Claude what to do differently' },
      ],
    });
    // A question of four options; then one of twelve long ones with a long concern: it opens the app, and fits.
    const options = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), label: `${i}`.repeat(size) }));
    push.alert('w2', {
      kind: 'awaiting-input',
      ask: ask({ id: 'a2', kind: 'question', tool: 'AskUserQuestion', concern: 'Which one?', choices: options(4, 100) }),
    });
    await eventually(() => sandbox.requests.length === 2, 15_000, 20);
    expect(payloads()[1]!.aps).toMatchObject({ category: 'TETHER_ASK_QUESTION_4', 'mutable-content': 1, alert: { title: 'pi asks you' } });
    expect((payloads()[1]!.choices as { label: string }[]).map((c) => c.label.length)).toEqual([60, 60, 60, 60]);
    push.alert('w3', {
      kind: 'awaiting-input',
      ask: ask({ id: 'a3', kind: 'question', concern: 'q'.repeat(500), choices: options(12, 200) }),
    });
    await eventually(() => sandbox.requests.length === 3, 15_000, 20);
    expect(payloads()[2]!.aps.category).toBe('TETHER_ASK_OPEN');
    expect(payloads()[2]!.choices).toBeUndefined();
    expect(sandbox.requests[2]!.body.length).toBeLessThan(4096);
    const always = ask({
      id: 'a4',
      choices: [
        { id: 'yes', label: 'Yes' },
        { id: 'always', label: 'Yes, and always' },
        { id: 'no', label: 'No' },
      ],
    });
    push.alert('w4', { kind: 'awaiting-input', ask: always });
    await eventually(() => sandbox.requests.length === 4, 15_000, 20);
    expect(payloads()[3]!.aps.category).toBe('TETHER_ASK_PERMISSION_ALWAYS');
  });

  it('an ask answered before its alert went out sends nothing (no stale alert)', async () => {
    devices = devices.slice(0, 1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    /** The asks whose alert was about to go out, in order (each is looked at once, just before its send). */
    const checked: string[] = [];
    // The alert waits for the label (read from tmux); the ask is answered meanwhile.
    const slow = new PushService({
      settings,
      devices: { list: () => devices, remove: () => undefined },
      inForeground: () => false,
      describe: async (id) => (await held, { name: id }),
      agentName: 'pi',
      askOpen: (_id, askId) => (checked.push(askId), openAsks.has(askId)),
      now: () => clock,
      log: silentLogger,
      ca: sandbox.certPem,
    });
    services.push(slow);
    openAsks = new Set(['open']);
    const asked = (id: string): Ask => ({
      id,
      kind: 'permission',
      agent: 'codex',
      concern: 'ls',
      choices: [{ id: 'yes', label: 'Yes' }],
      askedAt: '',
    });
    slow.alert('s1', { kind: 'awaiting-input', ask: asked('answered') });
    slow.alert('s2', { kind: 'awaiting-input', ask: asked('open') });
    release();
    // Both alerts came to their send; the answered one stopped there (it is never retried).
    await eventually(() => checked.length === 2 && slow.status().sent === 1, 15_000, 20, 'both alerts looked at, one sent');
    expect(checked.sort()).toEqual(['answered', 'open']);
    expect(sandbox.requests.map((r) => (r.payload as { askId: string }).askId)).toEqual(['open']);
    expect(slow.status()).toMatchObject({ sent: 1, failed: 0 });
  });

  it('a stop the agent went on from before its alert went out sends nothing; a usage limit says its reset, time-sensitive, with its category', async () => {
    devices = devices.slice(0, 1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const checked: string[] = [];
    const still = new Set(['held']);
    const slow = new PushService({
      settings,
      devices: { list: () => devices, remove: () => undefined },
      inForeground: () => false,
      describe: async (id) => (await held, { name: id }),
      agentName: 'Claude',
      stopHeld: (_id, stopId) => (checked.push(stopId), still.has(stopId)),
      now: () => clock,
      log: silentLogger,
      ca: sandbox.certPem,
    });
    services.push(slow);
    const resetsAt = '2026-11-28T15:45:00.000Z';
    const stop = (id: string) => ({
      id,
      kind: 'usage-limit' as const,
      message: "You've hit your 5-hour limit",
      resetsAt,
      limit: 'five_hour',
    });
    slow.alert('s1', { kind: 'stopped', stop: stop('went-on') });
    slow.alert('s2', { kind: 'stopped', stop: stop('held') });
    release();
    await eventually(() => checked.length === 2 && slow.status().sent === 1, 15_000, 20, 'both alerts looked at, one sent');
    expect(sandbox.requests).toHaveLength(1);
    const clockText = new Date(resetsAt).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });
    expect(sandbox.requests[0]!.payload).toEqual({
      aps: {
        alert: { title: `Claude reached its usage limit · resets ${clockText}`, subtitle: 's2', body: "You've hit your 5-hour limit" },
        sound: 'default',
        'thread-id': 'session-s2',
        category: 'TETHER_USAGE_LIMIT',
        'interruption-level': 'time-sensitive',
      },
      sessionId: 's2',
      stopId: 'held',
      stopKind: 'usage-limit',
      resetsAt,
      limit: 'five_hour',
    });
  });

  it('the stand-in outlives a client that resets its connection mid-request (a daemon killed), and answers the next one', async () => {
    // Unheard, the reset was an uncaught ECONNRESET in the test process (a fresh-clone run, M6).
    const url = new URL(sandbox.url);
    const before = sandbox.requests.length;
    for (let i = 0; i < 3; i++) {
      const raw = netConnect(Number(url.port), url.hostname);
      raw.on('error', () => undefined);
      await once(raw, 'connect');
      const tls = tlsConnect({ socket: raw, ca: sandbox.certPem, ALPNProtocols: ['h2'], servername: 'localhost' });
      tls.on('error', () => undefined);
      const client = http2Connect(sandbox.url, { createConnection: () => tls });
      client.on('error', () => undefined);
      await once(client, 'connect');
      const req = client.request({ ':method': 'POST', ':path': '/3/device/reset' });
      req.on('error', () => undefined);
      // Half a body, handed to the socket: the stand-in is reading a request when the reset comes.
      await new Promise<void>((resolve) => req.write('{"aps":', () => resolve()));
      raw.resetAndDestroy();
      await once(raw, 'close');
    }
    const push = service();
    push.awaitingInput('pi-main');
    await eventually(() => sandbox.requests.length > before, 10_000, 20, 'the next push at the stand-in');
    expect(sandbox.requests.slice(before).map((r) => r.deviceToken)).not.toContain('reset');
  });

  it('sends nothing for a session that is gone, and never throws into the caller', () => {
    const push = service();
    expect(() => push.awaitingInput('gone')).not.toThrow();
    devices = null as unknown as PushDevice[];
    expect(() => push.awaitingInput('pi-main')).not.toThrow();
  });

  it('is off, with the reason, when [push] is empty; refuses a half-filled section or a bad key with one line', async () => {
    const off = await preparePush(config({ team_id: '', key_id: '', key_path: '', bundle_id: '' }), 'c.toml');
    expect(off.enabled).toBe(false);
    expect(!off.enabled && off.reason).toContain('push is not configured');
    await expect(preparePush(config({ key_id: '' }), 'c.toml')).rejects.toMatchObject({
      code: 'push-config-invalid',
      message: '[push] in c.toml: key_id must be set too (push needs team_id, key_id, key_path and bundle_id)',
    });
    await expect(preparePush(config({ key_path: join(dir, 'nope.p8') }), 'c.toml')).rejects.toThrow(/key_path .*nope\.p8 does not exist/);
    const junk = join(dir, 'junk.p8');
    writeFileSync(junk, 'not a key');
    await expect(preparePush(config({ key_path: junk }), 'c.toml')).rejects.toThrow(/is not a PEM private key/);
    const rsa = join(dir, 'rsa.p8');
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(rsa, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
    await expect(preparePush(config({ key_path: rsa }), 'c.toml')).rejects.toThrow(/holds an RSA key; APNs needs an EC P-256 key/);
  });
});
