/**
 * The program Gemini CLI runs for each of tether's hooks (`node <this file>`, the hook input as
 * JSON on stdin): it sends the event's few fields tether reads to the daemon and exits. Gemini
 * waits on it, so it loads nothing heavy, gives up after about a second, always exits 0 and
 * prints nothing (Gemini acts on a hook's output and exit status; tether's hooks must never
 * change what Gemini does, with or without a daemon). docs/agents.md "Gemini CLI".
 */
import { hookReport, runHookProgram, sendHookReport } from '../wire/hook-send.js';
import { readHookInput } from '../wire/hook-input.js';
import { pickHookFields } from '../wire/hook-wire.js';
import { derivedGeminiFields, GEMINI_HOOK_FIELDS } from './hook-fields.js';

async function main(): Promise<void> {
  const input = await readHookInput();
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.toString('utf8'));
  } catch {
    // An input too large to read whole says nothing tether can place: no report.
    return;
  }
  const fields = { ...pickHookFields(parsed, GEMINI_HOOK_FIELDS), ...derivedGeminiFields(parsed) };
  const report = hookReport('gemini', fields, process.env, process.pid);
  if (report && fields.hook_event_name) await sendHookReport(report, process.env);
}

runHookProgram(main);
