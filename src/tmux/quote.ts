/**
 * Quoting of data for the two ways tether hands arguments to tmux.
 *
 * Invariant: whatever the bytes of a value, tmux receives exactly those bytes as ONE argument:
 * never split into a command list (`;`), never expanded by the parser (`$VAR`, `~`), never
 * re-quoted. NUL cannot be carried by either path and is refused.
 * (Formats `#{...}` are expanded by some commands from their arguments, not by the parser;
 * callers that pass data to such an argument escape `#` themselves.)
 */
import { DomainError } from '../errors.js';
import { PANE_ID_RE } from './layout.js';

/** A value that cannot be given to tmux at all (it holds a NUL byte, or a name is malformed): `invalid`. */
export const tmuxArgumentRefusal = (message: string): DomainError => new DomainError('invalid', message);

/** Bytes written as themselves inside double quotes; every other byte becomes `\ooo`. */
const SAFE_BYTE = new Uint8Array(256);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _.,:/=+@%-') {
  SAFE_BYTE[ch.charCodeAt(0)] = 1;
}

/** Arguments that may go bare on a command line (pane ids too): no quote, no `=` (a bare `A=b` is an assignment token), no leading `%`/`~`. */
const BARE_ARG = /^[A-Za-z0-9_.,:/+@-]+$/;
/** A command name: the first word of a control-mode line. */
const COMMAND_NAME = /^[a-z][a-z-]*$/;

/**
 * One control-mode argument in double quotes with every byte outside a small safe set as an
 * octal escape: inside double quotes tmux turns `\ooo` into that exact byte and expands nothing
 * else, so `$`, `#`, `~`, `;`, `"`, `\`, newlines and non-ASCII bytes all arrive unchanged.
 */
export function quoteControlArg(value: string | Buffer): string {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  if (bytes.includes(0)) throw tmuxArgumentRefusal('a tmux argument cannot contain a NUL byte');
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (SAFE_BYTE[b] === 1) continue;
    if (i > runStart) out += bytes.toString('latin1', runStart, i);
    out += '\\' + b.toString(8).padStart(3, '0');
    runStart = i + 1;
  }
  if (bytes.length > runStart) out += bytes.toString('latin1', runStart, bytes.length);
  return out + '"';
}

/**
 * A control-mode command line (no newline): the command name bare, then each argument bare when
 * it is a plain token and quoted by `quoteControlArg` otherwise. The only way tether builds one.
 */
export function buildControlCommand(args: readonly (string | Buffer)[]): string {
  const [name, ...rest] = args;
  if (typeof name !== 'string' || !COMMAND_NAME.test(name)) {
    throw tmuxArgumentRefusal('a control command must start with a tmux command name');
  }
  let line = name;
  for (const arg of rest) {
    line += ' ' + (typeof arg === 'string' && (BARE_ARG.test(arg) || PANE_ID_RE.test(arg)) ? arg : quoteControlArg(arg));
  }
  return line;
}

/**
 * One argv argument for tmux run with execFile: tmux ends a command at an argument whose last
 * character is `;`, unless a `\` precedes it (which it then drops), so a `\` goes before a
 * trailing `;`. Nothing else in argv is re-parsed. NUL cannot travel in argv at all.
 */
export function escapeArgvArg(value: string): string {
  if (value.includes('\0')) throw tmuxArgumentRefusal('a tmux argument cannot contain a NUL byte');
  return value.endsWith(';') ? `${value.slice(0, -1)}\\;` : value;
}
