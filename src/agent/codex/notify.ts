/**
 * The program Codex runs as its `notify` command (`-c notify=["node", "<this file>"]`): Codex
 * appends one JSON argument (`{"type": "agent-turn-complete", "thread-id": ..., ...}`). It first
 * starts the user's own notify program with the same argument (tether's `-c notify` replaced it
 * on the command line: user-notify.ts), then sends the few fields tether reads to the daemon (and
 * whether Codex's command line turned its rate-limit dialog off or on: launch.ts) and exits; like
 * Claude's hook program it gives up after about a second, always exits 0 and prints nothing.
 */
import { hookReport, runHookProgram, sendHookReport } from '../wire/hook-send.js';
import { pickHookFields } from '../wire/hook-wire.js';
import { CODEX_NOTIFY_FIELDS, NUDGE_HIDDEN_FIELD, NUDGE_HIDDEN_FLAG } from './notify-fields.js';
import { codexSessionsDir, isSavedThread } from './rollout.js';
import { runUserNotify, userNotify } from './user-notify.js';

async function main(): Promise<void> {
  const last = process.argv[process.argv.length - 1] ?? '';
  const user = userNotify(process.argv.slice(2, -1), process.env);
  if (user !== null) runUserNotify(user, last);
  const fields = pickHookFields(JSON.parse(last), CODEX_NOTIFY_FIELDS);
  // Codex's title-generation thread notifies too; only the session's own thread is saved.
  const thread = fields['thread-id'];
  const saved = thread === undefined ? null : isSavedThread(codexSessionsDir(process.env), thread);
  if (saved !== null) fields.saved = String(saved);
  // Codex's rate-limit dialog turned off or on by its command line (launch.ts says which).
  const hidden = process.argv.indexOf(NUDGE_HIDDEN_FLAG);
  const setting = hidden >= 0 ? process.argv[hidden + 1] : undefined;
  if (setting === 'true' || setting === 'false') fields[NUDGE_HIDDEN_FIELD] = setting;
  const report = hookReport('codex', fields, process.env, process.pid);
  if (report && fields.type) await sendHookReport(report, process.env);
}

runHookProgram(main);
