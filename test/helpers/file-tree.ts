/**
 * A snapshot of a folder, for "nothing here changed": every entry under it by relative path,
 * with its type, mode, size, modification time (ns) and a hash of its content; folders with
 * their modification time too when asked (an entry made and removed again shows there).
 * Symlinks are recorded, never followed. An entry gone between the listing and its look (a
 * writer's temp file renamed over its target meanwhile) is left out: its folder's time says the
 * folder changed, and a caller waiting for a still tree looks again.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function fileTree(dir: string, opts: { folderTimes?: boolean } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
      if (st === undefined) continue;
      const key = rel === '' ? name : `${rel}/${name}`;
      const mode = (st.mode & 0o777n).toString(8);
      if (st.isDirectory()) {
        out[`${key}/`] = `folder ${mode}${opts.folderTimes ? ` ${st.mtimeNs}` : ''}`;
        walk(path, key);
      } else if (st.isFile()) {
        const content = readIfThere(path);
        if (content !== null) out[key] = `file ${mode} ${st.size} ${st.mtimeNs} ${createHash('sha256').update(content).digest('hex')}`;
      } else {
        out[key] = `${st.isSymbolicLink() ? 'symlink' : st.isSocket() ? 'socket' : 'other'} ${mode} ${st.mtimeNs}`;
      }
    }
  };
  walk(dir, '');
  return out;
}

/** A file's bytes, or null when it is gone (renamed away since it was listed). */
function readIfThere(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
