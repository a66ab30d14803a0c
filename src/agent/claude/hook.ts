/**
 * The program Claude Code runs for each of tether's hooks (`node <this file>`, the hook input as
 * JSON on stdin): it sends the event's few fields tether reads to the daemon and exits. Claude
 * waits on it, so it loads nothing heavy, gives up after about a second, always exits 0 and
 * prints nothing (Claude acts on a hook's output and exit status; tether's hooks must never
 * change what Claude does, with or without a daemon). docs/agents.md "Claude Code".
 */
import { hookReport, runHookProgram, sendHookReport } from '../wire/hook-send.js';
import { readHookInput } from '../wire/hook-input.js';
import { pickHookFields } from '../wire/hook-wire.js';
import { CLAUDE_HOOK_FIELDS, derivedClaudeFields } from './hook-fields.js';

/** How much of an input too large to parse is searched for the fields. */
const SCAN_BYTES = 64 * 1024;

/** The fields of an input too large to parse whole: short string fields found near its start. */
function scanFields(head: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CLAUDE_HOOK_FIELDS) {
    const m = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\.){0,4096})"`).exec(head);
    if (!m) continue;
    try {
      out[key] = JSON.parse(`"${m[1]}"`) as string;
    } catch {
      // A cut escape: leave the field out.
    }
  }
  return out;
}

async function main(): Promise<void> {
  const input = await readHookInput();
  let fields: Record<string, string>;
  try {
    const parsed: unknown = JSON.parse(input.toString('utf8'));
    fields = { ...pickHookFields(parsed, CLAUDE_HOOK_FIELDS), ...derivedClaudeFields(parsed) };
  } catch {
    fields = scanFields(input.subarray(0, SCAN_BYTES).toString('utf8'));
  }
  const report = hookReport('claude', fields, process.env, process.pid);
  if (report && fields.hook_event_name) await sendHookReport(report, process.env);
}

runHookProgram(main);
