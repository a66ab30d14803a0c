/**
 * A tether session on the tmux server by name, through `TmuxCli` (execFile): whether it exists,
 * killing it, and reading and writing its user options (their names: src/tmux/layout.ts). Creating
 * one is src/tmux/sessions/session-create.ts; listing them all is src/tmux/sessions/session-list.ts.
 *
 * Invariants:
 * - Session names are checked before anything runs; targets are exact (`=name`, `=name:`).
 * - Option values reach tmux byte for byte and are never parsed by a shell, split into commands
 *   or expanded as a format.
 */
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../errors.js';
import { isNoServerError, isNoSessionError, type TmuxCli } from '../exec.js';
import { optionStoreOf, type FixedOptions } from './session-options.js';
import { tmuxArgumentRefusal } from '../quote.js';
import { SESSION_NAME_RULE, isValidSessionName } from '../../protocol/session-name.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import { checkOf } from '../../protocol/schema-check.js';
import { CHECKS, SessionWorktree as SessionWorktreeSchema } from '../../protocol/worktree.checks.js';
import { decodeJsonOption, OPTION_NAME_RE, SESSION_OPTIONS } from '../layout.js';

const worktreeCheck = checkOf(CHECKS, SessionWorktreeSchema);

/** Creating a session whose name is taken: `session-exists`. */
export const sessionExists = (session: string): DomainError => new DomainError('session-exists', `session ${session} already exists`);

/** A session (or the whole server) is not there: `session-not-found`, which `isNoSessionError` recognises by its cause. */
const sessionNotFound = (session: string, cause: unknown): DomainError =>
  new DomainError('session-not-found', `session ${session} does not exist`, { cause });

/** Refuses a name that is not a session name before anything runs. */
export function checkSessionName(name: string): void {
  if (!isValidSessionName(name)) throw tmuxArgumentRefusal(`a session name is ${SESSION_NAME_RULE}`);
}

/** Refuses a name that is not a user option's before anything runs. */
export function checkOptionName(option: string): void {
  if (!OPTION_NAME_RE.test(option)) throw tmuxArgumentRefusal('a tether option name looks like @name');
}

/** Maps "no such session" and "no server" to `session-not-found`; anything else passes. */
function notFoundOr(err: unknown, name: string): unknown {
  return isNoSessionError(err) || isNoServerError(err) ? sessionNotFound(name, err) : err;
}

/** A worktree as its option stores it. */
export function encodeWorktreeOption(worktree: SessionWorktree): string {
  const { repo, branch, path, base, newBranch } = worktree;
  return JSON.stringify({ repo, branch, path, base, newBranch });
}

/**
 * The worktree an option value holds, checked against its one schema (protocol/worktree.schemas.ts);
 * null when unset or not in the shape tether writes (set by hand).
 */
export function parseWorktreeOption(value: string | null): SessionWorktree | null {
  return decodeJsonOption(value, (v) => worktreeCheck.Check(v));
}

/** True when the session exists (false too when no server runs). */
export async function hasSession(cli: TmuxCli, name: string): Promise<boolean> {
  checkSessionName(name);
  try {
    await cli.run(['has-session', '-t', `=${name}`]);
    return true;
  } catch (err) {
    if (isNoSessionError(err) || isNoServerError(err)) return false;
    throw err;
  }
}

/** Kills the session; `session-not-found` when it (or the server) is not there. */
export async function killSession(cli: TmuxCli, name: string): Promise<void> {
  checkSessionName(name);
  try {
    await cli.run(['kill-session', '-t', `=${name}`]);
  } catch (err) {
    throw notFoundOr(err, name);
  } finally {
    optionStoreOf(cli).forget(name);
  }
}

/**
 * A session's option value, exact (`show-options -qv` prints the value plus one newline);
 * null when unset. `-q` also silences a missing session, so `has-session` runs first in the
 * same invocation and stops it with an error.
 */
export async function readOption(cli: TmuxCli, sessionTarget: string, option: string): Promise<string | null> {
  const { stdout } = await cli.runList([
    ['has-session', '-t', sessionTarget],
    ['show-options', '-qv', '-t', `${sessionTarget}:`, option],
  ]);
  if (stdout.length === 0) return null;
  const end = stdout[stdout.length - 1] === 0x0a ? stdout.length - 1 : stdout.length;
  return stdout.toString('utf8', 0, end);
}

/**
 * Most bytes of argv one tmux invocation of `readOptions` carries: tmux's client sends its whole
 * command line in one message of at most 16 KiB.
 */
const READ_BATCH_ARGV_BYTES = 12 * 1024;

/**
 * Several session options in as few tmux invocations as the command line allows (one for a
 * few dozen), each value exact as `readOption` reads it: null when unset or when its session
 * is gone (`show-options -q` is silent about both). The values are told apart by a marker line
 * no value can hold (128 random bits, new for every call).
 */
export async function readOptions(
  cli: TmuxCli,
  reads: readonly { readonly target: string; readonly option: string }[],
): Promise<(string | null)[]> {
  for (const r of reads) checkOptionName(r.option);
  const marker = `tether-${randomBytes(16).toString('hex')}`;
  const out: (string | null)[] = [];
  for (let from = 0; from < reads.length;) {
    const commands: string[][] = [];
    let bytes = 0;
    let to = from;
    for (; to < reads.length; to++) {
      const r = reads[to]!;
      const cmd = [
        ['show-options', '-qv', '-t', `${r.target}:`, r.option],
        ['display-message', '-p', marker],
      ];
      const size = cmd.flat().reduce((n, a) => n + Buffer.byteLength(a) + 1, 4);
      if (to > from && bytes + size > READ_BATCH_ARGV_BYTES) break;
      commands.push(...cmd);
      bytes += size;
    }
    const { stdout } = await cli.runList(commands);
    const parts = stdout.toString('utf8').split(`${marker}\n`);
    if (parts.length !== to - from + 1 || parts[to - from] !== '')
      throw new Error(`tmux answered ${parts.length - 1} of ${to - from} option reads`);
    for (const p of parts.slice(0, -1)) out.push(p === '' ? null : p.endsWith('\n') ? p.slice(0, -1) : p);
    from = to;
  }
  return out;
}

/** Reads one of tether's user options; null when unset; `session-not-found` when the session is not there. */
export async function readUserOption(cli: TmuxCli, name: string, option: string): Promise<string | null> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    return await readOption(cli, `=${name}`, option);
  } catch (err) {
    throw notFoundOr(err, name);
  }
}

/** Sets one of tether's user options to `value` exactly (any text but NUL; empty allowed). */
export async function setUserOption(cli: TmuxCli, name: string, option: string, value: string): Promise<void> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    // Without -F the value is stored as given: no format expansion. It follows the option
    // name, so a leading "-" is not taken for a flag.
    await cli.run(['set-option', '-t', `=${name}:`, option, value]);
  } catch (err) {
    throw notFoundOr(err, name);
  }
  if (option === SESSION_OPTIONS.description) optionStoreOf(cli).describedAs(name, value);
}

/** Removes one of tether's user options (no error when it was unset). */
export async function unsetUserOption(cli: TmuxCli, name: string, option: string): Promise<void> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    await cli.run(['set-option', '-u', '-t', `=${name}:`, option]);
  } catch (err) {
    throw notFoundOr(err, name);
  }
  if (option === SESSION_OPTIONS.description) optionStoreOf(cli).describedAs(name, null);
}

/**
 * tether's options of session `name` as tether keeps them (no process, src/tmux/sessions/session-options.ts),
 * else as tmux holds them; each null when unset or unreadable.
 */
export async function readSessionOptions(
  cli: TmuxCli,
  name: string,
): Promise<Pick<FixedOptions, 'createdAt' | 'agent' | 'worktree'> & { description: string | null }> {
  const store = optionStoreOf(cli);
  // A listing reading this session's options now answers for it too.
  const pending = store.pendingRead(name, store.keyOf(name));
  if (pending) await pending.catch(() => undefined);
  const known = store.known(name);
  if (known)
    return { description: known.description, createdAt: known.fixed.createdAt, agent: known.fixed.agent, worktree: known.fixed.worktree };
  // One tmux process for the four (`readOptions`); a session that is gone, or a name no session
  // can have, reads as all unset.
  const options = [SESSION_OPTIONS.description, SESSION_OPTIONS.created, SESSION_OPTIONS.agent, SESSION_OPTIONS.worktree];
  const read = async () => {
    checkSessionName(name);
    return readOptions(
      cli,
      options.map((option) => ({ target: `=${name}`, option })),
    );
  };
  const [description = null, createdAt = null, agent = null, worktree = null] = await read().catch(() => []);
  return { description, createdAt, agent, worktree: parseWorktreeOption(worktree) };
}
