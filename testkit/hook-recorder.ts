/**
 * What the real agents' temp homes share (claude-home.ts, codex-home.ts): hooks in Claude
 * Code's settings format (Codex reads the same) whose one command, a small node script,
 * appends each call's JSON as one line to a log, and the reading of such a log back.
 *
 * Invariant: everything it writes lives in the directory it is given.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One recorded hook call: the JSON the agent wrote to the hook's stdin. */
export interface HookRecord {
  readonly hook_event_name: string;
  readonly session_id: string;
  readonly [field: string]: unknown;
}

/** A node script that appends its stdin (one JSON object) as one line to the file named by argv[2]. */
const RECORDER = `const fs = require('node:fs');
let s = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (s += d));
process.stdin.on('end', () => {
  let line;
  try { line = JSON.stringify(JSON.parse(s)); } catch { line = JSON.stringify({ unparsed: s }); }
  fs.appendFileSync(process.argv[2], line + '\\n');
});
`;

export interface RecordingHooks {
  /** The settings' `hooks` object: every event given runs the recorder, whatever the matcher. */
  readonly hooks: Record<string, unknown>;
  /** Where the recorder writes, one JSON object a line. */
  readonly hookLog: string;
}

/** Writes the recorder into `root` and returns the hooks that run it for each of `events`. */
export function recordingHooks(root: string, events: readonly string[]): RecordingHooks {
  const recorder = join(root, 'record-hook.cjs');
  writeFileSync(recorder, RECORDER);
  const hookLog = join(root, 'hooks.jsonl');
  const command = `"${process.execPath}" "${recorder}" "${hookLog}"`;
  const hooks = Object.fromEntries(events.map((e) => [e, [{ matcher: '*', hooks: [{ type: 'command', command }] }]]));
  return { hooks, hookLog };
}

/** Every JSON line of a log written so far, in order (none while the log does not exist). */
export function readJsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}
