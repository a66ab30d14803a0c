/**
 * Who the daemon is before it listens, and its advertisement before one is made
 * (src/service/health/presence.ts `hostPresence`, `daemonName`): the id is read at once and made only by
 * `keep`, in a real data dir; an advertisement the plan refuses is never started, and `/health`'s
 * report says why.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDENTITY_FILE, readIdentity } from '../../src/auth/identity.js';
import { fillDefaults } from '../../src/config/defaults.js';
import { TetherConfigSchema } from '../../src/config/config.checks.js';
import type { TetherConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { daemonName, hostPresence } from '../../src/service/health/presence.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tether-presence-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const configOf = (raw: object) => fillDefaults(TetherConfigSchema, raw) as TetherConfig;
const presenceIn = (dataDir: string, raw: object = {}, bindHost = '127.0.0.1') =>
  hostPresence({ config: configOf(raw), dataDir, bindHost, tls: true, version: '0.1.0', log: silentLogger });

describe('the daemon id', () => {
  it('on a first start writes nothing and refuses to tell the id until keep has made it', () => {
    const presence = presenceIn(dir);
    expect(existsSync(join(dir, IDENTITY_FILE))).toBe(false);
    expect(() => presence.id).toThrow("the daemon's id is asked before the port is held");
    presence.keep();
    const made = readIdentity(dir)?.id;
    expect(presence.id).toBe(made);
    presence.keep();
    expect(presence.id).toBe(made);
    expect(presence.report().id).toBe(made);
  });

  it('tells the kept id at once', () => {
    presenceIn(dir).keep();
    expect(presenceIn(dir).id).toBe(readIdentity(dir)?.id);
  });
});

describe('daemonName', () => {
  it('is the configured name, else the host name', () => {
    expect(daemonName(configOf({ name: 'devbox' }))).toBe('devbox');
    expect(daemonName(configOf({ name: '' }))).toBe(hostname());
    expect(presenceIn(dir, { name: 'devbox' }).name).toBe('devbox');
  });
});

describe('the advertisement before the daemon listens', () => {
  it('when the plan says no, is never made and the report says off with its reason', async () => {
    const presence = presenceIn(dir);
    presence.keep();
    presence.advertise('127.0.0.1', 7890, 'AB:CD');
    expect(presence.report().mdns).toEqual({
      state: 'off',
      reason: 'tether listens on 127.0.0.1, which no other device reaches (bindAddress)',
      instance: null,
    });
    await presence.stop();
  });

  it('with no TLS fingerprint, is not made and the report stays starting', async () => {
    const presence = presenceIn(dir, {}, '0.0.0.0');
    presence.keep();
    presence.advertise('0.0.0.0', 7890, null);
    expect(presence.report().mdns).toEqual({ state: 'starting', reason: null, instance: null });
    await presence.stop();
  });
});
