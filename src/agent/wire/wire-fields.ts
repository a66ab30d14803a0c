/**
 * Reading one field of a line on the agent socket (extension-channel.ts, hook-decode.ts,
 * usage-message.ts): each with its type and limit checked, a breach a `DomainError`
 * (`agent-bad-message`) that names the field.
 */
import { DomainError } from '../../errors.js';

/** A short text field (a pane id, a tool's name, a version). */
export const MAX_SHORT_CHARS = 256;
/** A path or a URL. */
export const MAX_PATH_CHARS = 4096;

/** A line that cannot be taken: `agent-bad-message` (or `agent-line-too-long`, from the reader). */
export const bad = (message: string) => new DomainError('agent-bad-message', message);

/** Field `key` of `o` as a string of at most `max` characters; undefined when optional and absent. */
export function str(o: Record<string, unknown>, key: string, max: number, optional = false): string | undefined {
  const v = o[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw bad(`${key}: must be a string`);
  if (v.length > max) throw bad(`${key}: longer than ${max} characters`);
  return v;
}

/** Field `key` of `o` as a positive integer (a process id); undefined when optional and absent. */
export function positiveInt(o: Record<string, unknown>, key: string, what: string, optional = false): number | undefined {
  const v = o[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) throw bad(`${key}: must be a positive integer${what}`);
  return v;
}

/** A file's absolute path (no NUL): what tether may later hand to the agent to reopen. */
export function absolutePath(o: Record<string, unknown>, key: string, optional = false): string | undefined {
  const v = str(o, key, MAX_PATH_CHARS, optional);
  if (v !== undefined && (!v.startsWith('/') || v.includes('\u0000'))) throw bad(`${key}: must be an absolute path`);
  return v;
}
