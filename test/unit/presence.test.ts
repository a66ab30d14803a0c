/**
 * Who the daemon is before it listens (src/auth/presence.ts `DaemonId`, `daemonName`) and its
 * advertisement before one is made (src/mdns/advertising.ts): the id is read at once and made only
 * by `keep`, in a real data dir; an advertisement the plan refuses is never started.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDENTITY_FILE, readIdentity } from '../../src/auth/identity.js';
import { DaemonId, daemonName } from '../../src/auth/presence.js';
import { fillDefaults } from '../../src/config/defaults.js';
import { TetherConfigSchema } from '../../src/config/config.checks.js';
import type { TetherConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { Advertising } from '../../src/mdns/advertising.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tether-presence-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('DaemonId', () => {
  it('on a first start writes nothing and refuses to tell the id until keep has made it', () => {
    const id = new DaemonId(dir);
    expect(existsSync(join(dir, IDENTITY_FILE))).toBe(false);
    expect(() => id.id).toThrow("the daemon's id is asked before the port is held");
    id.keep();
    expect(id.id).toBe(readIdentity(dir)?.id);
    id.keep();
    expect(id.id).toBe(readIdentity(dir)?.id);
  });

  it('tells the kept id at once', () => {
    new DaemonId(dir).keep();
    const kept = readIdentity(dir)?.id;
    expect(new DaemonId(dir).id).toBe(kept);
  });

  it('passes a broken file through settle, which makes the refusal', () => {
    writeFileSync(join(dir, IDENTITY_FILE), 'not json');
    const settle = <T>(read: () => T): T => {
      try {
        return read();
      } catch (err) {
        throw new Error(`refused: ${(err as Error).message}`, { cause: err });
      }
    };
    expect(() => new DaemonId(dir, settle)).toThrow(/^refused: /);
  });
});

describe('daemonName', () => {
  it('is the configured name, else the host name', () => {
    const config = (name: string) => fillDefaults(TetherConfigSchema, { name }) as TetherConfig;
    expect(daemonName(config('devbox'))).toBe('devbox');
    expect(daemonName(config(''))).toBe(hostname());
  });
});

describe('Advertising', () => {
  it('when the plan says no, never starts and reports off with its reason', async () => {
    const advertising = new Advertising('off in the config ([discovery] mdns = false)', silentLogger);
    let made = 0;
    advertising.advertise('AB:CD', () => {
      made++;
      throw new Error('no advertisement is to be made');
    });
    expect(made).toBe(0);
    expect(advertising.status()).toEqual({ state: 'off', reason: 'off in the config ([discovery] mdns = false)', instance: null });
    await advertising.stop();
  });

  it('with no TLS fingerprint, makes no advertisement and stays starting', () => {
    const advertising = new Advertising(null, silentLogger);
    advertising.advertise(null, () => {
      throw new Error('no advertisement is to be made');
    });
    expect(advertising.status()).toEqual({ state: 'starting', reason: null, instance: null });
  });
});
