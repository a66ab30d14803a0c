/**
 * Every machine a running daemon runs is on `/ops` (docs/architecture.md "Actors"): the test lists
 * the machines of src/machines that run as actors in the daemon, puts a built daemon where each
 * runs (a session with its disk buffer, a phone's stream, an agent reporting on the agent socket,
 * a prompt queued behind its turn, a continue scheduled, a usage window past a threshold, a paired
 * phone's Live Activity over a real HTTP/2 TLS stand-in for APNs), and finds each machine in the
 * actor list or, for the one that lives only while a resume is answered, on the events socket.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { pushToml, startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { fakeAgent } from '../helpers/agent-socket.js';
import { ROOT } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pairDevice } from '../helpers/pair-device.js';
import { eventually } from '../helpers/tmux.js';

const PHONE = 'd4'.repeat(32);
const START = 'e5'.repeat(40);
const WAIT_MS = 30_000;

/** The machines in src/machines that are not actors of the daemon, and why. */
const NOT_ACTORS: Record<string, string> = {
  device: "a pure table the device registry consults for each registration's move (auth/devices.ts): no actor runs it",
};

/** Every machine src/machines defines, by its id: what the daemon may run. */
async function machineIds(): Promise<string[]> {
  const dir = join(ROOT, 'src/machines');
  const ids = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.machine.ts'))) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      const m = value as { id?: unknown; root?: unknown; config?: unknown } | null;
      if (m !== null && typeof m === 'object' && typeof m.id === 'string' && m.root !== undefined && m.config !== undefined) ids.add(m.id);
    }
  }
  return [...ids].sort();
}

describe('/ops shows every machine the daemon runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-ops-machines-'));
  let apns: ApnsStandIns | null = null;
  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
  });
  const fx = useDaemon(
    () => ['[agent]', 'command = "cat"', 'default_session = "m-main"', ...pushToml(apns!.sandbox.url, apns!.keyPath), ''].join('\n'),
    { extraEnv: () => ({ NODE_EXTRA_CA_CERTS: apns!.caFile }), sessions: ['m1'] },
  );
  afterAll(async () => {
    await apns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the machines of src/machines, and finds each of the daemon on /ops while it runs', { timeout: 120_000 }, async () => {
    const all = await machineIds();
    const expected = all.filter((id) => NOT_ACTORS[id] === undefined);
    // Every machine is either run by the daemon or said here not to be an actor.
    expect(Object.keys(NOT_ACTORS).every((id) => all.includes(id))).toBe(true);
    expect(expected.length).toBeGreaterThanOrEqual(10);

    // The events socket sees every actor that runs while it watches, however briefly.
    const seen = new Set<string>();
    const events = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/ops/events`, { headers: { authorization: `Bearer ${fx.d.token}` } });
    events.on('message', (data) => {
      const batch = JSON.parse((data as Buffer).toString('utf8')) as unknown;
      for (const m of Array.isArray(batch) ? batch : [batch]) {
        const msg = m as { type: string; actors?: { machine: string | null }[]; actor?: { machine: string | null } };
        for (const a of msg.actors ?? []) if (a.machine !== null) seen.add(a.machine);
        if (msg.type === 'state' && msg.actor?.machine) seen.add(msg.actor.machine);
      }
    });
    await new Promise<void>((resolve, reject) => {
      events.once('open', () => resolve());
      events.once('error', reject);
    });

    const phone = await pairDevice(fx, 'phone', PHONE, 'sandbox');
    const given = await fetch(`${fx.d.base}/device/live-activity`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${phone.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pushToStartToken: START }),
    });
    expect(given.status).toBe(200);
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=m1:', '#{pane_id}')).trim();
    const agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    expect((await agent.welcomed).type).toBe('welcome');
    // Working: a prompt waits for the turn's end, so its machine runs while the test looks.
    agent.event('agent.start');
    const mirror = fx.mirror('m1');
    await eventually(() => mirror.kinds().includes('state'), WAIT_MS, 25, 'the stream of m1');
    const prompt = await fx.json('POST', '/sessions/m1/prompt', { text: 'after this turn' });
    expect(prompt.status).toBe(202);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    expect((await fx.json('POST', '/sessions/m1/continue', { at })).status).toBe(201);
    agent.usage([{ name: 'five_hour', usedPercent: 85, resetsAt: Date.now() + 7_200_000 }]);

    const listed = async (): Promise<string[]> => {
      const { actors } = (await (await fx.d.get('/ops/actors')).json()) as { actors: { machine: string | null }[] };
      for (const a of actors) if (a.machine !== null) seen.add(a.machine);
      return expected.filter((id) => !seen.has(id));
    };
    const missing = await eventually(async () => ((await listed()).length === 0 ? [] : null), WAIT_MS, 100, 'every machine on /ops').catch(
      async () => await listed(),
    );
    expect(missing, `machines the daemon runs that /ops did not show (seen: ${[...seen].sort().join(', ')})`).toEqual([]);
    expect([...seen].sort()).toEqual(expected);
    events.close();
    agent.close();
  });
});
