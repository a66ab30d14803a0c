/**
 * The daemon's identity across its life (docs/pairing.md "Which daemon is which"): the id made
 * at the first start is the one every later start has; a file that holds no id stops the start
 * with one line naming it, and is left as it was; `tether pair` says the same id before the
 * daemon ever ran. And `[discovery] mdns = false` keeps a daemon bound to every interface off
 * the local network, saying so in `/health`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonHome, runCli, type DaemonHome } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const AGENT = `[agent]\ncommand = "/bin/cat"\ndefault_session = "pi-main"\n`;

interface Health {
  id: string;
  name: string;
  mdns: { state: string; reason: string | null; instance: string | null };
}

describe('the daemon id, kept in the data dir', () => {
  const fx = useDaemon(`name = "studio"\n${AGENT}`);
  const health = async () => (await (await fx.d.get('/health')).json()) as Health;
  const identityFile = () => join(fx.home.dataDir, 'identity.json');

  it('is the same after a restart, and tether pair --json carries it', async () => {
    const first = await health();
    expect(first.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.name).toBe('studio');
    const pair = await runCli(['pair', '--json'], fx.home.env);
    expect(pair.code, pair.stderr).toBe(0);
    const p = JSON.parse(pair.stdout) as { id: string; name: string; url: string };
    expect(p).toMatchObject({ id: first.id, name: 'studio' });
    expect(new URL(p.url.replace(/^tether:/, 'http:')).searchParams.get('id')).toBe(first.id);

    expect(await fx.d.stop()).toBe(0);
    await fx.startAgain();
    expect((await health()).id).toBe(first.id);
  }, 90_000);

  it('a file that holds no id stops the start with one line naming it, and is left as it was', async () => {
    expect(await fx.d.stop()).toBe(0);
    const broken = '{"id": "not an id"}\n';
    writeFileSync(identityFile(), broken);
    const r = await runCli(['serve'], fx.home.env);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`tether: ${identityFile()} holds no valid id: it holds this daemon's id, which paired phones know it by`);
    expect(readFileSync(identityFile(), 'utf8')).toBe(broken);
  }, 90_000);
});

describe('tether pair before the daemon ever ran, and the id it then keeps', () => {
  let home: DaemonHome;
  beforeAll(() => {
    home = daemonHome('/nonexistent-tmux-socket', `tls = false\nbindAddress = "127.0.0.1:7999"\n${AGENT}`);
  });
  afterAll(() => home?.cleanup());

  it('makes the id once; every later look reads the same', async () => {
    const first = await runCli(['pair', '--json'], home.env);
    expect(first.code, first.stderr).toBe(0);
    const { id } = JSON.parse(first.stdout) as { id: string };
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.parse(readFileSync(join(home.dataDir, 'identity.json'), 'utf8'))).toMatchObject({ id });
    const again = await runCli(['pair', '--json'], home.env);
    expect((JSON.parse(again.stdout) as { id: string }).id).toBe(id);
  }, 90_000);
});

describe('[discovery] mdns = false', () => {
  const fx = useDaemon(`bindAddress = "0.0.0.0:0"\n[discovery]\nmdns = false\n${AGENT}`);

  it('keeps a daemon bound to every interface off the local network, and /health says why', async () => {
    const h = (await (await fx.d.get('/health')).json()) as Health;
    expect(h.mdns).toEqual({ state: 'off', reason: 'off in the config ([discovery] mdns = false)', instance: null });
    expect(fx.d.stderr()).not.toMatch(/advertised on the local network/);
  });
});
