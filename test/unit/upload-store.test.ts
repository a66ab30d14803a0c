/**
 * The upload store on real files: safe names for hostile ones, no upload ever replaced, the
 * limit and a body that breaks off leave nothing, modes 0600/0700, the session's folder
 * removed with it, and the clean-up of old uploads.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_NAME_BYTES, safeUploadName, UploadStore } from '../../src/uploads/upload-store.js';
import { domainError } from '../helpers/domain-error.js';
import { typedPath } from '../../src/service/uploads.service.js';

let root: string;
beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'tether-uploads-'))));
afterEach(() => rmSync(root, { recursive: true, force: true }));

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
    const store = new UploadStore({ root, maxBytes: 100 });
    const a = await store.save('s1', 'a.txt', body('one'));
    const b = await store.save('s1', 'a.txt', body('two'));
    expect([a.name, b.name]).toEqual(['a.txt', 'a-1.txt']);
    expect(readFileSync(a.path, 'utf8')).toBe('one');
    expect(readFileSync(b.path, 'utf8')).toBe('two');
    expect(statSync(a.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 's1')).mode & 0o777).toBe(0o700);
  });

  it('refuses a body past the limit and one that breaks off, leaving nothing', async () => {
    const store = new UploadStore({ root, maxBytes: 10 });
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
    await expect(store.save('s1', '../..', body('x'))).rejects.toMatchObject({ code: 'invalid', field: 'name' });
    expect(() => store.folder('../x')).toThrow();
  });

  it('removes a session’s uploads, and uploads older than the cut-off', async () => {
    const store = new UploadStore({ root, maxBytes: 100 });
    const old = await store.save('s1', 'old.txt', body('o'));
    const fresh = await store.save('s1', 'new.txt', body('n'));
    await store.save('s2', 'x.txt', body('x'));
    const longAgo = new Date(Date.now() - 10 * 24 * 3600 * 1000);
    utimesSync(old.path, longAgo, longAgo);
    expect(await store.cleanup(Date.now() - 7 * 24 * 3600 * 1000)).toEqual([old.path]);
    expect(readdirSync(join(root, 's1'))).toEqual([fresh.name]);
    await store.removeSession('s2');
    expect(readdirSync(root)).toEqual(['s1']);
  });
});
