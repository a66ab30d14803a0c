/**
 * The files of the disk buffers: where a session's `<id>.log` and `<id>.idx` live (never outside
 * the buffers dir, whatever the id), appending to them (0600, never through a symlink), and
 * measuring what the dir holds.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { isValidSessionName } from '../protocol/session-name.js';

const OPEN_APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/** The files of a session's buffer; throws for an id that is not a session name. */
export function bufferPaths(dir: string, id: string): { log: string; idx: string } {
  if (!isValidSessionName(id)) throw new Error(`not a session id: ${JSON.stringify(id).slice(0, 80)}`);
  const root = resolve(dir);
  const log = resolve(root, `${id}.log`);
  if (!log.startsWith(root + sep)) throw new Error(`a buffer path must stay in ${root}`);
  return { log, idx: resolve(root, `${id}.idx`) };
}

/** Opens a file to append to: created 0600, never through a symlink. */
export function openToAppend(path: string): Promise<FileHandle> {
  return open(path, OPEN_APPEND, 0o600);
}

/** Appends to a file opened 0600, never through a symlink; returns the bytes written. */
export async function appendTo(path: string, data: Buffer): Promise<number> {
  const fh = await openToAppend(path);
  try {
    const { bytesWritten } = await fh.write(data, 0, data.length);
    return bytesWritten;
  } finally {
    await fh.close();
  }
}

/** Sizes of every `<id>.log` in `dir`, by id (a dir that cannot be read holds none). */
export async function measureBuffers(dir: string): Promise<Map<string, { size: number; stats: Stats }>> {
  const out = new Map<string, { size: number; stats: Stats }>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith('.log') || !isValidSessionName(name.slice(0, -4))) continue;
    try {
      const stats = await lstat(join(dir, name));
      if (stats.isFile()) out.set(name.slice(0, -4), { size: stats.size, stats });
    } catch {
      // Removed meanwhile.
    }
  }
  return out;
}
