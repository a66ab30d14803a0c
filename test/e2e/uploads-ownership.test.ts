/**
 * Uploads in a folder the user also uses (#32): `[uploads] dir` is a folder full of the user's
 * files, some in subfolders named like sessions (`projects`, `notes`, `archive`), all of them
 * old. Sessions of those names are created, files uploaded to them and to sessions whose folder
 * tether makes itself, sessions deleted, and the keep-days clean-up run with the uploads' clock
 * days ahead (the daemon in this process, started again with the clock moved). Every file of the
 * user's is there byte for byte with its times, tether's own are gone, and the folders tether
 * made are removed only when nothing else is in them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { fileTree } from '../helpers/file-tree.js';
import { eventually } from '../helpers/tmux.js';

const DAY = 86_400_000;

/** The user's folder, made before the daemon starts. */
const userDir = mkdtempSync(join(tmpdir(), 'tether-user-files-'));
/** The user's files: path under userDir to content. */
const USER_FILES: Record<string, Buffer> = {
  'README.md': Buffer.from('# my things\n'),
  'projects/notes.txt': Buffer.from('the user’s notes in projects\n'),
  'projects/app/main.ts': Buffer.from('console.log("mine");\n'),
  'projects/shot.png': randomBytes(4096),
  'notes/todo.md': Buffer.from('- keep my files\n'),
  'notes/.hidden': Buffer.from('dot file\n'),
  'archive/old.log': randomBytes(1024),
  'archive/deep/older.log': randomBytes(512),
};
const longAgo = new Date(Date.now() - 40 * DAY);
for (const [path, bytes] of Object.entries(USER_FILES)) {
  mkdirSync(join(userDir, path, '..'), { recursive: true });
  writeFileSync(join(userDir, path), bytes);
  // Old enough for any clean-up that judged files by their own age.
  utimesSync(join(userDir, path), longAgo, longAgo);
}

const before = fileTree(userDir);

let offset = 0;
const fx = useInProcessDaemon(
  [
    '[agent]',
    'command = "/bin/sh"',
    'default_session = "pi-main"',
    '[uploads]',
    `dir = ${JSON.stringify(userDir)}`,
    'keep_days = 2',
    '',
  ].join('\n'),
  { parts: { uploadsClock: () => Date.now() + offset } },
);
afterAll(() => rmSync(userDir, { recursive: true, force: true }));

interface Stored {
  path: string;
  bytes: number;
  name: string;
}

describe('uploads in a folder full of the user’s files', () => {
  const upload = async (session: string, name: string, bytes: Buffer): Promise<Stored> => {
    const res = await fx.d.get(`/sessions/${session}/files?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.status).toBe(201);
    const stored = (await res.json()) as Stored;
    expect(readFileSync(stored.path).equals(bytes)).toBe(true);
    return stored;
  };
  const create = async (name: string) => expect((await fx.json('POST', '/sessions', { name })).status).toBe(201);
  const remove = async (name: string) => expect((await fx.d.get(`/sessions/${name}`, { method: 'DELETE' })).status).toBe(204);
  const gone = (paths: string[], what: string) => eventually(() => paths.every((p) => !existsSync(p)), 15_000, 50, what);

  it(
    'after uploads, deletes and clean-ups, every file of the user’s is there, tether’s are gone, its folders removed only when empty',
    { timeout: 180_000 },
    async () => {
      for (const name of ['projects', 'notes', 'archive', 'fresh', 'scratch']) await create(name);

      // Into the user's own folders: names the user already has get another name, nothing is replaced.
      const intoProjects = [
        await upload('projects', 'notes.txt', randomBytes(300)),
        await upload('projects', 'shot.png', randomBytes(900)),
      ];
      expect(intoProjects.map((u) => u.name)).toEqual(['notes-1.txt', 'shot-1.png']);
      const intoNotes = await upload('notes', 'todo.md', Buffer.from('from the phone\n'));
      const intoArchive = await upload('archive', 'old.log', Buffer.from('tether’s log\n'));
      // Folders tether makes itself: one the user then puts a file in, one left to tether alone.
      const intoFresh = [await upload('fresh', 'a.txt', Buffer.from('a')), await upload('fresh', 'b.txt', Buffer.from('b'))];
      writeFileSync(join(userDir, 'fresh', 'mine.txt'), 'the user’s file in tether’s folder\n');
      const intoScratch = await upload('scratch', 'c.txt', Buffer.from('c'));
      const intoMain = await upload('pi-main', 'x.txt', Buffer.from('x'));

      // Deleting sessions named like the user's folders removes tether's files only.
      for (const name of ['projects', 'fresh', 'scratch']) await remove(name);
      await gone(
        [...intoProjects, ...intoFresh, intoScratch].map((u) => u.path),
        'the deleted sessions’ uploads removed',
      );
      await eventually(() => !existsSync(join(userDir, 'scratch')), 15_000, 50, 'the folder tether made for scratch, empty, removed');
      expect(readdirSync(join(userDir, 'fresh'))).toEqual(['mine.txt']);

      // Days later, the clean-up at start removes the rest of tether's uploads: by the ledger, not by the files' age.
      await fx.d.stop();
      offset = 5 * DAY;
      await fx.startAgain();
      await gone([intoNotes.path, intoArchive.path, intoMain.path], 'the old uploads of live sessions removed');
      await eventually(() => !existsSync(join(userDir, 'pi-main')), 15_000, 50, 'the folder tether made for pi-main, empty, removed');

      // Deleting sessions whose folders are the user's, after the clean-up: nothing more goes.
      for (const name of ['notes', 'archive']) await remove(name);
      const ledger = JSON.parse(readFileSync(join(fx.home.dataDir, 'uploads.json'), 'utf8')) as {
        files: unknown[];
        folders: { path: string }[];
      };
      expect(ledger.files).toEqual([]);
      // The folder tether made for fresh stays known as tether's: once the user empties it, it may go.
      expect(ledger.folders.map((f) => f.path)).toEqual([join(userDir, 'fresh')]);

      const fresh = fileTree(join(userDir, 'fresh'));
      expect(fileTree(userDir)).toEqual({ ...before, 'fresh/': 'folder 700', 'fresh/mine.txt': fresh['mine.txt'] });
    },
  );
});
