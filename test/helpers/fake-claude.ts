/**
 * A fake `claude` for the hook tests: a node script that, like Claude Code, reads the
 * `--settings` file tether gave it and runs each hook's command through sh with the hook input on
 * stdin (the fields Claude Code documents). It fires SessionStart, prints `fake claude ready`,
 * then one named event per line typed into its pane.
 */
import { chmodSync, writeFileSync } from 'node:fs';

export interface FakeClaudeScript {
  /** The session id in every hook input. */
  readonly sessionId: string;
  /** JavaScript run first, with `args` (its arguments) and `fs` at hand. */
  readonly setup?: string;
  /** JavaScript run after each hook's command, with `hook_event_name` and its result `r` (spawnSync's). */
  readonly afterHook?: string;
  /** JavaScript run after each event's hooks, with `hook_event_name`. */
  readonly afterEvent?: string;
  /** The body of the `events` object: `name: () => fire('Event', { ...fields })` entries. */
  readonly events: string;
  /** JavaScript run for each typed line before the events (`line`), e.g. a `quit`. */
  readonly onLine?: string;
  /** JavaScript run once the event of a typed `line` fired. */
  readonly afterLine: string;
}

/** Writes the fake to `file` (made executable). */
export function writeFakeClaude(file: string, script: FakeClaudeScript): void {
  writeFileSync(
    file,
    `#!/usr/bin/env node
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const args = process.argv.slice(2);
${script.setup ?? ''}
const settings = JSON.parse(fs.readFileSync(args[args.indexOf('--settings') + 1], 'utf8'));
const base = { session_id: ${JSON.stringify(script.sessionId)}, transcript_path: '/tmp/t.jsonl', cwd: process.cwd(), permission_mode: 'default' };
const fire = (hook_event_name, extra = {}) => {
  for (const group of settings.hooks[hook_event_name] || []) for (const h of group.hooks) {
    const r = spawnSync('/bin/sh', ['-c', h.command], { input: JSON.stringify({ ...base, hook_event_name, ...extra }), timeout: 10000 });
    ${script.afterHook ?? ''}
  }
  ${script.afterEvent ?? ''}
};
const events = {
${script.events}
};
fire('SessionStart', { source: 'startup' });
process.stdout.write('fake claude ready\\n');
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.search(/[\\r\\n]/)) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    ${script.onLine ?? ''}
    if (events[line]) { events[line](); ${script.afterLine} }
  }
});
`,
  );
  chmodSync(file, 0o755);
}
