import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokenStore, TokenStoreError } from '../../src/auth/token-store.js';

describe('TokenStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'tether-auth-')), 'auth');
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('creates the local token once, keeps it across reopening, stores only its hash in tokens.json', async () => {
    const a = await TokenStore.open(dir);
    const first = await a.ensureLocalToken();
    expect(first.created).toBe(true);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const b = await TokenStore.open(dir);
    const again = await b.ensureLocalToken();
    expect(again).toEqual({ token: first.token, created: false });
    expect(readFileSync(join(dir, 'tokens.json'), 'utf8')).not.toContain(first.token!);
    expect(b.verify(first.token!)?.name).toBe('local');
  });

  it('keeps secrets 0600 in a 0700 directory', async () => {
    const s = await TokenStore.open(dir);
    await s.ensureLocalToken();
    s.create('phone', 'device');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'tokens.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'local-token')).mode & 0o777).toBe(0o600);
  });

  it('verifies, revokes and renames by name or id', async () => {
    const s = await TokenStore.open(dir);
    const { token, record } = s.create('laptop');
    expect(s.verify(token)?.id).toBe(record.id);
    expect(s.verify(token + 'x')).toBeNull();
    expect(s.verify('')).toBeNull();
    expect(s.rename(record.id, 'work-laptop').name).toBe('work-laptop');
    expect(() => s.create('work-laptop')).toThrow(TokenStoreError);
    s.revoke('work-laptop');
    expect(s.verify(token)).toBeNull();
    expect(() => s.revoke('nope')).toThrow(TokenStoreError);
  });

  it('sees a revocation made by another process (the CLI) without a restart', async () => {
    let now = 1_000_000;
    const daemon = await TokenStore.open(dir, () => now);
    const cli = await TokenStore.open(dir);
    const { token } = cli.create('phone');
    now += 2000;
    expect(daemon.verify(token)?.name).toBe('phone');
    cli.revoke('phone');
    now += 2000;
    expect(daemon.verify(token)).toBeNull();
  });

  it('refuses a corrupt or truncated file instead of resetting it', async () => {
    const s = await TokenStore.open(dir);
    const { token } = s.create('x');
    const good = readFileSync(join(dir, 'tokens.json'), 'utf8');
    writeFileSync(join(dir, 'tokens.json'), good.slice(0, good.length / 2));
    await expect(TokenStore.open(dir)).rejects.toThrow(TokenStoreError);
    writeFileSync(join(dir, 'tokens.json'), '{"tokens":[{"id":1}]}');
    await expect(TokenStore.open(dir)).rejects.toThrow(/corrupt/);
    // The file was not rewritten by the failed opens.
    expect(readFileSync(join(dir, 'tokens.json'), 'utf8')).toBe('{"tokens":[{"id":1}]}');
    void token;
  });
});
