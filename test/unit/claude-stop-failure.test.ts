/**
 * Claude Code's `StopFailure` read with its transcript (src/agent/claude/stop-failure.ts): the
 * reset comes from the failed answer's record, and a second usage limit whose words are the same
 * as the first's ("resets 6:37pm" twice in one minute) is read from its own, newer record.
 */
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { readClaudeStopFailure, STOP_TRANSCRIPT_WAIT_MS } from '../../src/agent/claude/stop-failure.js';

const WORDS = "You've hit your session limit · resets 6:37pm";

/** A transcript line as Claude writes a failed answer of a usage limit resetting at `resetsAt` (epoch seconds). */
const limitRecord = (resetsAt: number): string =>
  JSON.stringify({
    type: 'assistant',
    isApiErrorMessage: true,
    apiError: 'usage_limit_reached',
    apiErrorParams: { rate_limit_info: { status: 'rejected', resetsAt, rateLimitType: 'five_hour' } },
    message: { role: 'assistant', content: [{ type: 'text', text: WORDS }] },
  }) + '\n';
const userLine = (text: string): string => JSON.stringify({ type: 'user', message: { role: 'user', content: text } }) + '\n';

describe("Claude's stop on a usage limit, read from its transcript", () => {
  let dir: string;
  let transcript: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tether-stop-failure-'));
    transcript = join(dir, 'session.jsonl');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));
  const hook = () => ({ hook_event_name: 'StopFailure', error: 'rate_limit', last_assistant_message: WORDS, transcript_path: transcript });

  test('the reset and the limit come from the record with the hook words', async () => {
    await writeFile(transcript, userLine('hello') + limitRecord(1_800_000_000));
    const { stop, mark } = await readClaudeStopFailure(hook(), null);
    expect(stop).toEqual({ kind: 'usage-limit', message: WORDS, resetsAt: 1_800_000_000_000, limit: 'five_hour' });
    expect(mark).toEqual({ transcript, end: Buffer.byteLength(userLine('hello') + limitRecord(1_800_000_000)) });
  });

  test('a second limit with the same words waits for its own record, not the first one', async () => {
    await writeFile(transcript, userLine('hello') + limitRecord(1_800_000_000));
    const first = await readClaudeStopFailure(hook(), null);
    await appendFile(transcript, userLine('one more thing'));
    // Claude runs the hook a moment before it writes the record.
    const second = readClaudeStopFailure(hook(), first.mark);
    setTimeout(() => void appendFile(transcript, limitRecord(1_800_000_030)), 300);
    const { stop, mark } = await second;
    expect(stop).toMatchObject({ kind: 'usage-limit', resetsAt: 1_800_000_030_000 });
    expect(mark!.end).toBeGreaterThan(first.mark!.end);
  });

  test(
    'no new record in time: the hook words decide, a usage limit without its reset',
    async () => {
      await writeFile(transcript, userLine('hello') + limitRecord(1_800_000_000));
      const first = await readClaudeStopFailure(hook(), null);
      const { stop, mark } = await readClaudeStopFailure(hook(), first.mark);
      expect(stop).toEqual({ kind: 'usage-limit', message: WORDS });
      expect(mark).toEqual(first.mark);
    },
    STOP_TRANSCRIPT_WAIT_MS + 10_000,
  );

  test('an API error that is not a limit is an error with its words', async () => {
    const words = 'API Error: 529 Overloaded';
    await writeFile(
      transcript,
      JSON.stringify({ isApiErrorMessage: true, apiError: 'overloaded', message: { content: [{ type: 'text', text: words }] } }) + '\n',
    );
    const { stop } = await readClaudeStopFailure({ ...hook(), error: 'server_error', last_assistant_message: words }, null);
    expect(stop).toEqual({ kind: 'error', message: words });
  });
});
