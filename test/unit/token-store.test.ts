/**
 * The token store against a real directory: what lands on disk (hashes only, modes, atomic
 * replacement), what a broken file does (refuses, never resets), and how a running daemon sees
 * the CLI's changes.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/auth/token-file.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { DomainError } from '../../src/errors.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const modeOf = (p: string) => statSync(p).mode & 0o777;
const fileOf = (dir: string) => join(dir, 'tokens.json');
const recordsOn = (dir: string) => (JSON.parse(readFileSync(fileOf(dir), 'utf8')) as { tokens: TokenRecord[] }).tokens;

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a rejection');
}

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a throw');
}

describe('TokenStore', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tether-auth-'));
    dir = join(root, 'data', 'auth');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  describe('the local token', () => {
    it('is created on first start and is the same token on every later start', async () => {
      const first = await (await TokenStore.open(dir)).ensureLocalToken();
      expect(first.created).toBe(true);
      expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes, base64url
      for (let i = 0; i < 2; i++) {
        const store = await TokenStore.open(dir);
        expect(await store.ensureLocalToken()).toEqual({ token: first.token, created: false });
        expect(store.verify(first.token!)).toMatchObject({ name: 'local', kind: 'local' });
      }
      expect(recordsOn(dir).filter((r) => r.kind === 'local')).toHaveLength(1);
    });

    it('keeps its plaintext only in local-token, and trusts it only while it matches the hash', async () => {
      const { token } = await (await TokenStore.open(dir)).ensureLocalToken();
      expect(readFileSync(join(dir, 'local-token'), 'utf8').trim()).toBe(token);
      writeFileSync(join(dir, 'local-token'), 'not-the-token\n');
      expect(await (await TokenStore.open(dir)).ensureLocalToken()).toEqual({ token: null, created: false });
      rmSync(join(dir, 'local-token'));
      expect(await (await TokenStore.open(dir)).ensureLocalToken()).toEqual({ token: null, created: false });
    });

    it('once revoked, stops working, loses its plaintext file, and the next start makes a new one', async () => {
      const store = await TokenStore.open(dir);
      const { token: old } = await store.ensureLocalToken();
      store.revoke('local');
      expect(store.verify(old!)).toBeNull();
      expect(readdirSync(dir)).not.toContain('local-token');
      const next = await (await TokenStore.open(dir)).ensureLocalToken();
      expect(next.created).toBe(true);
      expect(next.token).not.toBe(old);
    });
  });

  it('stores only SHA-256 hashes, never a plaintext, in tokens.json', async () => {
    const store = await TokenStore.open(dir);
    const { token: local } = await store.ensureLocalToken();
    const phone = store.create('phone', 'device');
    const laptop = store.create('laptop', 'cli');
    const text = readFileSync(fileOf(dir), 'utf8');
    for (const t of [local!, phone.token, laptop.token]) expect(text).not.toContain(t);
    const hashes = recordsOn(dir)
      .map((r) => r.hash)
      .sort();
    expect(hashes).toEqual([local!, phone.token, laptop.token].map(sha256).sort());
    expect(recordsOn(dir).find((r) => r.name === 'phone')).toMatchObject({ kind: 'device', lastUsedAt: null, id: phone.record.id });
    expect(new Set([local, phone.token, laptop.token]).size).toBe(3);
  });

  it('keeps every file 0600 in a 0700 directory, even one that existed with looser modes', async () => {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    writeFileSync(fileOf(dir), JSON.stringify({ version: 1, tokens: [] }), { mode: 0o644 });
    chmodSync(fileOf(dir), 0o644);
    const store = await TokenStore.open(dir);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(fileOf(dir))).toBe(0o600);
    await store.ensureLocalToken();
    store.create('phone', 'device');
    store.rename('phone', 'iphone');
    expect(modeOf(fileOf(dir))).toBe(0o600);
    expect(modeOf(join(dir, 'local-token'))).toBe(0o600);
  });

  it('replaces the file atomically: a reader holding the old file keeps it whole, no temp file or lock is left', async () => {
    const store = await TokenStore.open(dir);
    await store.ensureLocalToken();
    for (const change of [() => store.create('a'), () => store.rename('a', 'b'), () => store.revoke('b')]) {
      const before = readFileSync(fileOf(dir), 'utf8');
      const fd = openSync(fileOf(dir), 'r');
      try {
        change();
        // Written in place, the open file would now show the new bytes (or a mix).
        expect(readFileSync(fd, 'utf8')).toBe(before);
      } finally {
        closeSync(fd);
      }
      expect(readFileSync(fileOf(dir), 'utf8')).not.toBe(before);
    }
    expect(readdirSync(dir).sort()).toEqual(['local-token', 'tokens.json']);
  });

  it('opening writes nothing: no directory until the first write, which makes it 0700', async () => {
    const store = await TokenStore.open(dir);
    expect(store.list()).toEqual([]);
    expect(existsSync(join(root, 'data'))).toBe(false);
    store.create('a');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('waits for another writer’s lock, and takes over one left by a crash', async () => {
    const store = await TokenStore.open(dir);
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, 'tokens.json.lock');
    writeFileSync(lock, '');
    const started = Date.now();
    expect(thrown(() => store.create('a')).code).toBe('store-locked');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(store.list()).toEqual([]);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(store.create('a').record.name).toBe('a');
    expect(readdirSync(dir)).not.toContain('tokens.json.lock');
  });

  it('verifies, revokes and renames by name or id, with errors that say what is wrong', async () => {
    const s = await TokenStore.open(dir);
    const { token, record } = s.create('laptop');
    expect(s.verify(token)?.id).toBe(record.id);
    expect(s.verify(token + 'x')).toBeNull();
    expect(s.verify(token.slice(0, -1))).toBeNull();
    expect(s.verify('')).toBeNull();
    expect(s.verify(record.hash)).toBeNull();
    expect(s.rename(record.id, 'work laptop').name).toBe('work laptop');
    expect(s.verify(token)?.name).toBe('work laptop');
    expect(thrown(() => s.create('work laptop')).code).toBe('token-name-taken');
    const other = s.create('phone', 'device');
    expect(thrown(() => s.rename('phone', 'work laptop')).code).toBe('token-name-taken');
    expect(thrown(() => s.create('')).code).toBe('token-name-invalid');
    expect(thrown(() => s.create('a\nb')).code).toBe('token-name-invalid');
    expect(thrown(() => s.create('x'.repeat(65))).code).toBe('token-name-invalid');
    // Characters are code points, as a device name's schema counts them: 64 emoji are a name (found by fuzzing: a 500 on POST /pair).
    expect(s.revoke(s.create('\u{1f600}'.repeat(64)).record.id).name).toBe('\u{1f600}'.repeat(64));
    expect(thrown(() => s.create('\u{1f600}'.repeat(65))).code).toBe('token-name-invalid');
    expect(s.revoke('work laptop').id).toBe(record.id);
    expect(s.verify(token)).toBeNull();
    expect(s.revoke(other.record.id).name).toBe('phone');
    expect(thrown(() => s.revoke('nope')).code).toBe('token-not-found');
    expect(s.list()).toEqual([]);
  });

  it('sees the CLI’s changes in a running daemon at its very next check, the clock standing still', async () => {
    const now = 1_000_000;
    const daemon = await TokenStore.open(dir, () => now);
    const cli = await TokenStore.open(dir);
    expect(daemon.verify('anything')).toBeNull();
    const { token } = cli.create('phone');
    expect(daemon.verify(token)?.name).toBe('phone');
    cli.rename('phone', 'iphone');
    expect(daemon.verify(token)?.name).toBe('iphone');
    cli.revoke('iphone');
    expect(daemon.verify(token)).toBeNull();
  });

  it('tells the revocation listeners at the first check after the CLI’s revocation, not on a timer', async () => {
    const daemon = await TokenStore.open(dir);
    const cli = await TokenStore.open(dir);
    const kept = cli.create('kept');
    const gone = cli.create('gone');
    expect(daemon.verify(kept.token)?.name).toBe('kept');
    const heard: string[] = [];
    // A timer far away: only the checks below can make the listener hear anything.
    const stop = daemon.watchRevocations((r) => heard.push(r.name), 3_600_000);
    cli.revoke('gone');
    expect(heard).toEqual([]); // the daemon has not looked yet
    expect(daemon.verify('some other token')).toBeNull(); // any request looks
    expect(heard).toEqual(['gone']);
    expect(daemon.verify(gone.token)).toBeNull();
    expect(daemon.verify(kept.token)?.name).toBe('kept');
    expect(heard).toEqual(['gone']); // told once
    daemon.revoke('kept'); // a revocation by the daemon itself is heard too
    expect(heard).toEqual(['gone', 'kept']);
    stop();
    cli.create('again');
    cli.revoke('again');
    daemon.verify('x');
    expect(heard).toEqual(['gone', 'kept']); // stopped: heard no more
  });

  it('never loses another process’s write: each change starts from the file, not from memory', async () => {
    const now = 1_000_000;
    const daemon = await TokenStore.open(dir, () => now); // its clock never moves: no refresh
    const cli = await TokenStore.open(dir);
    const victim = cli.create('stolen-phone');
    expect(daemon.list()).toHaveLength(1);
    cli.revoke('stolen-phone');
    daemon.create('tablet', 'device');
    expect(recordsOn(dir).map((r) => r.name)).toEqual(['tablet']);
    expect(daemon.verify(victim.token)).toBeNull();
  });

  describe('a corrupt or truncated file', () => {
    const good = async () => {
      const s = await TokenStore.open(dir);
      const { token } = s.create('x');
      return { token, text: readFileSync(fileOf(dir), 'utf8') };
    };

    it.each([
      ['truncated', (t: string) => t.slice(0, Math.floor(t.length / 2))],
      ['empty', () => ''],
      ['not JSON', () => 'tokens: yes'],
      ['a malformed record', () => '{"version":1,"tokens":[{"id":1}]}'],
      ['a hash that is not a SHA-256', (t: string) => t.replace(/"hash": "[0-9a-f]{64}"/, '"hash": "abc"')],
      ['no version', () => '{"tokens":[]}'],
      ['an array', () => '[]'],
    ])('%s: open refuses with a DomainError naming the file, and leaves it as it was', async (_name, damage) => {
      const { text } = await good();
      const broken = damage(text);
      writeFileSync(fileOf(dir), broken);
      const err = await rejection(TokenStore.open(dir));
      expect(err.code).toBe('store-corrupt');
      expect(err.message).toContain(fileOf(dir));
      expect(readFileSync(fileOf(dir), 'utf8')).toBe(broken);
    });

    it('in a running daemon: keeps the last good set, and refuses changes instead of overwriting', async () => {
      const now = 1_000_000;
      const { token, text } = await good();
      const daemon = await TokenStore.open(dir, () => now);
      writeFileSync(fileOf(dir), text.slice(0, 20));
      expect(daemon.verify(token)?.name).toBe('x');
      expect(daemon.verify('wrong')).toBeNull();
      expect(thrown(() => daemon.create('y')).code).toBe('store-corrupt');
      expect(readFileSync(fileOf(dir), 'utf8')).toBe(text.slice(0, 20));
      writeFileSync(fileOf(dir), JSON.stringify({ version: 1, tokens: [] }));
      expect(daemon.verify(token)).toBeNull();
    });
  });

  it('writes last-used times in batches, not per use', async () => {
    const now = Date.parse('2025-01-02T03:04:05.000Z');
    const s = await TokenStore.open(dir, () => now);
    const a = s.create('a');
    const b = s.create('b');
    const before = statSync(fileOf(dir)).ino;
    for (let i = 0; i < 100; i++) s.touch(a.record.id);
    expect(statSync(fileOf(dir)).ino).toBe(before);
    expect(recordsOn(dir).every((r) => r.lastUsedAt === null)).toBe(true);
    s.close();
    expect(recordsOn(dir).find((r) => r.id === a.record.id)?.lastUsedAt).toBe('2025-01-02T03:04:05.000Z');
    expect(recordsOn(dir).find((r) => r.id === b.record.id)?.lastUsedAt).toBeNull();
    s.touch(b.record.id);
    s.revoke('b');
    s.flushTouches();
    expect(recordsOn(dir).map((r) => r.name)).toEqual(['a']);
  });
});
