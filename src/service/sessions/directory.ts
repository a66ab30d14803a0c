/** The directory a new session's agent starts in, checked before anything is made. */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { DomainError } from '../../errors.js';

/**
 * Checks the directory a new session's agent is to start in: an absolute path to an existing
 * directory this user can enter. The message names it, so a typo is plain to see.
 */
export async function checkDirectory(cwd: string): Promise<void> {
  const refuse = (why: string) => new DomainError('invalid', `${JSON.stringify(cwd)} ${why}`, { field: 'cwd' });
  if (cwd.includes('\u0000')) throw refuse('contains a NUL character');
  if (!isAbsolute(cwd)) throw refuse('is not an absolute path');
  const info = await stat(cwd).catch(() => null);
  if (!info) throw refuse('does not exist');
  if (!info.isDirectory()) throw refuse('is not a directory');
  if (
    !(await access(cwd, constants.X_OK).then(
      () => true,
      () => false,
    ))
  )
    throw refuse('cannot be entered (no search permission)');
}

/**
 * The directory a session's agent starts in when none was asked for: the default session in the
 * daemon's own directory, every other session in the user's home (the daemon's directory without one).
 */
export function defaultSessionDirectory(
  id: string,
  where: { defaultSession: string; daemonCwd: string; home: string | undefined },
): string {
  return id === where.defaultSession ? where.daemonCwd : (where.home ?? where.daemonCwd);
}
