/**
 * The program Gemini CLI runs for each of tether's hooks (`node <this file>`, the hook input as
 * JSON on stdin): it sends the event's few fields tether reads to the daemon and exits. Gemini
 * waits on it, so it loads nothing heavy, gives up after about a second, always exits 0 and
 * prints nothing (Gemini acts on a hook's output and exit status; tether's hooks must never
 * change what Gemini does, with or without a daemon). docs/agents.md "Gemini CLI".
 */
import { hookReport, runHookProgram, sendHookReport } from '../wire/hook-send.js';
import { pickHookFields } from '../wire/hook-wire.js';
import { derivedGeminiFields, GEMINI_HOOK_FIELDS } from './hook-fields.js';

/** Most stdin read: a tool's input (a file being written) can be large. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

function readStdin(): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (chunk: Buffer) => {
      if (size < MAX_INPUT_BYTES) parts.push(chunk);
      size += chunk.length;
    });
    process.stdin.on('end', () => resolve(Buffer.concat(parts)));
    process.stdin.on('error', () => resolve(Buffer.concat(parts)));
  });
}

async function main(): Promise<void> {
  const input = await readStdin();
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
