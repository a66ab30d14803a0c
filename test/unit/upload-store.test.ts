/**
 * The upload store on real files: safe names for hostile ones, no upload ever replaced, the
 * limit and a body that breaks off leave nothing, modes 0600/0700; and what it may remove: only
 * the files and folders its ledger says it wrote, while they are still those very files (never a
 * file of the user's beside them or put in their place, never a folder that was there before,
 * never through a symlink), with the clean-up working from the ledger alone.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { UploadLedger } from '../../src/uploads/upload-ledger.js';
import { MAX_NAME_BYTES, safeUploadName } from '../../src/uploads/upload-names.js';
import { UploadStore, type UploadStoreOptions } from '../../src/uploads/upload-store.js';
import { domainError } from '../helpers/domain-error.js';
import { typedPath } from '../../src/service/workbench/uploads.service.js';

const DAY = 24 * 3600 * 1000;

let base: string;
let root: string;
let ledgerFile: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'tether-uploads-'));
  root = join(base, 'root');
  mkdirSync(root);
  ledgerFile = join(base, 'data', 'uploads.json');
  mkdirSync(join(base, 'data'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** A store on `root` with a ledger in the data dir; `now` is its clock. */
function storeOf(opts: Partial<UploadStoreOptions> & { warnings?: string[] } = {}): UploadStore {
  const warnings = opts.warnings ?? [];
  const log = { warn: (m: string) => warnings.push(m) } as unknown as Logger;
  return new UploadStore({ root, maxBytes: 1000, ledger: new UploadLedger(ledgerFile, log), ...opts });
}

/** What the ledger file says, read afresh. */
const ledgerOnDisk = () => JSON.parse(readFileSync(ledgerFile, 'utf8')) as { files: { path: string }[]; folders: { path: string }[] };

/** Every file under `dir` with its content, for "nothing of the user's changed". */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) out[p] = `-> symlink`;
      else if (e.isDirectory()) {
        out[`${p}/`] = '';
        walk(p);
      } else out[p] = readFileSync(p, 'base64');
    }
  };
  walk(dir);
  return out;
}

const body = (...parts: (string | Buffer)[]) => Readable.from(parts.map((p) => Buffer.from(p)));

describe('safe upload names', () => {
  it.each([
    ['screenshot.png', 'screenshot.png'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\shot.png', 'shot.png'],
    ['a;b $(rm -rf ~) `x`.txt', 'a-b-rm-rf-x-.txt'],
    ['.bashrc', 'bashrc'],
    ['résumé photo.jpg', 'résumé-photo.jpg'],
  ])('keeps a plain name and reduces hostile ones to a base name: %j becomes %j', (name, safe) => {
    expect(safeUploadName(name)).toBe(safe);
  });

  it.each(['..', '.', '/', '...', '\u0000', '\n', '$$$', '  '])('reduces %j to no name at all', (nothing) => {
    expect(safeUploadName(nothing)).toBe('');
  });

  it('never yields a folder, "..", a control character or more than the byte limit, whatever it is given', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (name) => {
        const safe = safeUploadName(name);
        expect(safe).not.toMatch(/[/\\]/);
        expect(safe.startsWith('.')).toBe(false);
        expect([...safe].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f')).toBe(false);
        expect(Buffer.byteLength(safe)).toBeLessThanOrEqual(MAX_NAME_BYTES);
      }),
    );
  });

  it('keeps the extension of a name cut to the limit', () => {
    const long = `${'x'.repeat(300)}.png`;
    const safe = safeUploadName(long);
    expect(Buffer.byteLength(safe)).toBe(MAX_NAME_BYTES);
    expect(safe.endsWith('.png')).toBe(true);
  });

  it('types a path as it is, or single-quoted', () => {
    expect(typedPath('/data/uploads/s/a.png')).toBe('/data/uploads/s/a.png');
    expect(typedPath("/my dir/it's.png")).toBe(`'/my dir/it'\\''s.png'`);
  });
});

describe('the upload store', () => {
  it('stores 0600 in a 0700 folder per session and never replaces an upload', async () => {
    const store = storeOf({ maxBytes: 100 });
    const a = await store.save('s1', 'a.txt', body('one'));
    const b = await store.save('s1', 'a.txt', body('two'));
    expect([a.name, b.name]).toEqual(['a.txt', 'a-1.txt']);
    expect(readFileSync(a.path, 'utf8')).toBe('one');
    expect(readFileSync(b.path, 'utf8')).toBe('two');
    expect(statSync(a.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 's1')).mode & 0o777).toBe(0o700);
    expect(statSync(ledgerFile).mode & 0o777).toBe(0o600);
  });

  it('refuses a body past the limit and one that breaks off, leaving nothing (nor a ledger entry)', async () => {
    const store = storeOf({ maxBytes: 10 });
    await expect(store.save('s1', 'big.bin', body('123456', '789012'))).rejects.toThrow(domainError('too-large'));
    const broken = new Readable({
      read() {
        this.push(Buffer.from('abc'));
        this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
    await expect(store.save('s1', 'half.bin', broken)).rejects.toMatchObject({
      code: 'invalid',
      message: 'body: the upload stopped halfway',
    });
    expect(readdirSync(join(root, 's1'))).toEqual([]);
    expect(ledgerOnDisk().files).toEqual([]);
    await expect(store.save('s1', '../..', body('x'))).rejects.toMatchObject({ code: 'invalid', field: 'name' });
    expect(() => store.folder('../x')).toThrow();
  });

  it('removes a session’s uploads and its folder, and uploads stored before the cut-off, by the ledger’s clock', async () => {
    let now = 1_000 * DAY;
    const store = storeOf({ now: () => now });
    const old = await store.save('s1', 'old.txt', body('o'));
    now += 5 * DAY;
    const fresh = await store.save('s1', 'new.txt', body('n'));
    await store.save('s2', 'x.txt', body('x'));
    // The files were made a moment apart: the ledger's clock says when tether stored each.
    expect(await store.cleanup(now - 2 * DAY)).toEqual([old.path]);
    expect(readdirSync(join(root, 's1'))).toEqual([fresh.name]);
    expect(await store.removeSession('s2')).toEqual([join(root, 's2', 'x.txt')]);
    expect(readdirSync(root)).toEqual(['s1']);
    // Everything older: s1's files and then its folder, made by tether and empty, go too.
    expect(await store.cleanup(now + 1)).toEqual([fresh.path]);
    expect(readdirSync(root)).toEqual([]);
    expect(ledgerOnDisk()).toEqual({ v: 1, files: [], folders: [] });
  });

  it('never removes a folder that was there before, nor the user’s files in it or in a folder tether made', async () => {
    mkdirSync(join(root, 'projects'));
    writeFileSync(join(root, 'projects', 'plan.md'), 'the user’s plan');
    mkdirSync(join(root, 'projects', 'sub'));
    writeFileSync(join(root, 'projects', 'sub', 'deep.txt'), 'deep');
    // A user file whose name is the name tether would pick: tether picks another.
    writeFileSync(join(root, 'projects', 'shot.png'), 'the user’s shot');
    const before = tree(root);
    let now = 1_000 * DAY;
    const store = storeOf({ now: () => now });
    const up = await store.save('projects', 'shot.png', body('tether’s shot'));
    expect(up.name).toBe('shot-1.png');
    const other = await store.save('notes', 'a.txt', body('a'));
    // The user puts a file in the folder tether made for "notes".
    writeFileSync(join(root, 'notes', 'mine.txt'), 'mine');
    now += 30 * DAY;
    expect((await store.cleanup(now)).sort()).toEqual([other.path, up.path].sort());
    expect(await store.removeSession('projects')).toEqual([]);
    expect(await store.removeSession('notes')).toEqual([]);
    expect(tree(root)).toEqual({
      ...before,
      [`${join(root, 'notes')}/`]: '',
      [join(root, 'notes', 'mine.txt')]: Buffer.from('mine').toString('base64'),
    });
    // Once the user empties it, the folder tether made is removed by the next clean-up; theirs never.
    rmSync(join(root, 'notes', 'mine.txt'));
    await store.cleanup(now);
    expect(existsSync(join(root, 'notes'))).toBe(false);
    expect(tree(root)).toEqual(before);
  });

  it('a file the user put in place of an upload at the same path, or changed since, is never taken for it', async () => {
    const store = storeOf();
    const up = await store.save('s1', 'report.txt', body('tether’s'));
    const edited = await store.save('s1', 'draft.txt', body('tether’s draft'));
    rmSync(up.path);
    writeFileSync(up.path, 'the user’s report');
    writeFileSync(edited.path, 'the user’s own words now');
    expect(await store.removeSession('s1')).toEqual([]);
    expect(readFileSync(up.path, 'utf8')).toBe('the user’s report');
    expect(readFileSync(edited.path, 'utf8')).toBe('the user’s own words now');
    // The folder tether made still holds the user's file: it stays.
    expect(existsSync(join(root, 's1'))).toBe(true);
    expect(ledgerOnDisk().files).toEqual([]);
  });

  it('never follows a symlink: not a session folder that is one, not an upload replaced by one', async () => {
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'keep.txt'), 'keep');
    symlinkSync(elsewhere, join(root, 'linked'));
    const store = storeOf();
    await expect(store.save('linked', 'a.txt', body('x'))).rejects.toThrow(/is not a folder/);
    expect(readdirSync(elsewhere)).toEqual(['keep.txt']);

    const up = await store.save('s1', 'a.txt', body('x'));
    rmSync(up.path);
    symlinkSync(join(elsewhere, 'keep.txt'), up.path);
    await store.removeSession('s1');
    expect(lstatSync(up.path).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(elsewhere, 'keep.txt'), 'utf8')).toBe('keep');
    await store.cleanup(Number.MAX_SAFE_INTEGER);
    expect(readFileSync(join(elsewhere, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('a folder tether made that the user replaced with their own is the user’s, even on the freed inode', async () => {
    const store = storeOf();
    const up = await store.save('s1', 'a.txt', body('x'));
    rmSync(join(root, 's1'), { recursive: true });
    // ext4 hands the freed inode out again at once: the birth time tells the two apart.
    mkdirSync(join(root, 's1'));
    await store.removeSession('s1');
    expect(existsSync(join(root, 's1'))).toBe(true);
    expect(existsSync(up.path)).toBe(false);
    expect(ledgerOnDisk()).toEqual({ v: 1, files: [], folders: [] });
  });

  it('records a file the moment it is opened: one left by a daemon that died mid-upload is still removed', async () => {
    const first = storeOf();
    const stream = new PassThrough();
    const saving = first.save('s1', 'big.bin', stream).catch(() => undefined);
    try {
      stream.write(Buffer.from('part'));
      await waitFor(() => readFileSync(join(root, 's1', 'big.bin'), 'utf8') === 'part', 'the first part of the body on disk');
      expect(ledgerOnDisk().files).toEqual([expect.objectContaining({ session: 's1', path: join(root, 's1', 'big.bin') })]);
      expect(ledgerOnDisk().files[0]).not.toHaveProperty('written');
      // Another store on the same ledger, as the next daemon would be.
      const next = storeOf();
      expect(await next.removeSession('s1')).toEqual([join(root, 's1', 'big.bin')]);
      expect(existsSync(join(root, 's1'))).toBe(false);
    } finally {
      stream.end();
      await saving;
    }
  });

  it('keeps every entry of concurrent uploads', async () => {
    const store = storeOf();
    const saved = await Promise.all(Array.from({ length: 30 }, (_, i) => store.save(i % 2 ? 'odd' : 'even', `f${i}.txt`, body(`${i}`))));
    const onDisk = ledgerOnDisk()
      .files.map((f) => f.path)
      .sort();
    expect(onDisk).toEqual(saved.map((s) => s.path).sort());
    expect(
      ledgerOnDisk()
        .folders.map((f) => f.path)
        .sort(),
    ).toEqual([join(root, 'even'), join(root, 'odd')]);
    await Promise.all([store.removeSession('odd'), store.removeSession('even'), store.cleanup(0)]);
    expect(readdirSync(root)).toEqual([]);
    expect(ledgerOnDisk()).toEqual({ v: 1, files: [], folders: [] });
  });

  it('keeps at most maxKept uploads: past it the oldest go', async () => {
    let now = 1_000;
    const store = storeOf({ now: () => now++, maxKept: 3 });
    const paths = [];
    for (let i = 0; i < 5; i++) paths.push((await store.save('s1', `f${i}.txt`, body(`${i}`))).path);
    expect(readdirSync(join(root, 's1')).sort()).toEqual(['f2.txt', 'f3.txt', 'f4.txt']);
    expect(ledgerOnDisk().files.map((f) => f.path)).toEqual(paths.slice(2));
  });

  it('forgets entries whose file is gone, and reads a broken ledger as empty: nothing is removed then', async () => {
    const store = storeOf();
    const a = await store.save('s1', 'a.txt', body('a'));
    await store.save('s1', 'b.txt', body('b'));
    rmSync(a.path);
    await store.cleanup(0);
    expect(ledgerOnDisk().files.map((f) => f.path)).toEqual([join(root, 's1', 'b.txt')]);

    writeFileSync(ledgerFile, '{"v":1,"files":[{"path":"/etc"}]');
    const warnings: string[] = [];
    const after = storeOf({ warnings });
    expect(await after.removeSession('s1')).toEqual([]);
    await after.cleanup(Number.MAX_SAFE_INTEGER);
    expect(readdirSync(join(root, 's1'))).toEqual(['b.txt']);
    expect(warnings).toEqual([expect.stringContaining('holds no valid uploads ledger')]);
  });
});

/** Polls `cond` until it holds, for at most 10 s; `what` says what was awaited. */
async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const holds = () => {
    try {
      return cond();
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 1000 && !holds(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!holds()) throw new Error(`waited 10 s for ${what}`);
}
