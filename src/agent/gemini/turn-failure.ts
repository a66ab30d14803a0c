/**
 * Why a Gemini CLI turn ended, from its chat file (docs/agents.md "Gemini CLI", "Stops"): Gemini
 * runs `AfterAgent` for a turn that failed too (its `prompt_response` is then `[no response
 * text]`), and says nothing else through its hooks; but it writes the failure to the chat file
 * its hooks name (`transcript_path`) before that hook runs: a record `{"type": "error", "content":
 * "[API Error: …]"}` after the turn's prompt. A usage limit is an error whose words say so
 * (`quota`, `usage limit`, `rate limit`, `RESOURCE_EXHAUSTED`).
 *
 * Invariant: at most TAIL_BYTES are read, from the file's end; a file that cannot be read says
 * the turn ended well (null).
 */
import { open } from 'node:fs/promises';
import type { StopReport } from '../contract/stops.js';

/** Most bytes read from the chat file's end. */
const TAIL_BYTES = 256 * 1024;
/** The words of a usage limit in Gemini's error. */
const USAGE_LIMIT = /quota|usage limit|rate limit|RESOURCE_EXHAUSTED|\b429\b/i;

interface ChatRecord {
  readonly type?: string;
  readonly content?: unknown;
}

/** The stop of a turn whose last record (after its prompt and answer) is an error; null for a turn that ended well. */
export function geminiTurnFailure(tail: string): StopReport | null {
  const records: ChatRecord[] = [];
  for (const line of tail.split('\n')) {
    if (!line.startsWith('{"id"')) continue;
    try {
      records.push(JSON.parse(line) as ChatRecord);
    } catch {
      // The first line of a tail may be cut.
    }
  }
  const last = records.filter((r) => r.type !== 'info' && r.type !== 'warning').at(-1);
  if (last?.type !== 'error' || typeof last.content !== 'string') return null;
  const message = last.content.replace(/^\[API Error: ([\s\S]*?)\]/, '$1').trim();
  return { kind: USAGE_LIMIT.test(last.content) ? 'usage-limit' : 'error', message };
}

/** Reads the end of the chat file at `path` for the turn's failure; null when it ended well or cannot be read. */
export async function readGeminiTurnFailure(path: string): Promise<StopReport | null> {
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const start = Math.max(0, size - TAIL_BYTES);
      const buf = Buffer.alloc(size - start);
      const { bytesRead } = await file.read(buf, 0, buf.length, start);
      return geminiTurnFailure(buf.subarray(0, bytesRead).toString('utf8'));
    } finally {
      await file.close();
    }
  } catch {
    return null;
  }
}
