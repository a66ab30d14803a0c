/**
 * Claude Code's reports as the daemon reads them, session by session: each hook report's
 * meaning (events.ts), and what only a sequence of reports tells about an open question: which
 * tool call it is about (the `PreToolUse` before it), and how it ended when tether did not type
 * the answer. An allowed tool reports its end (`PostToolUse` of that call: answered at the
 * terminal); a refusal at the terminal reports nothing, so while a question is open its
 * transcript (the file Claude writes the conversation to, named by every hook) is looked at for
 * the refused call's result, which Claude writes at once.
 *
 * Invariants: at most one transcript is looked at per session, every TRANSCRIPT_POLL_MS, from the
 * size it had when the question opened, at most TRANSCRIPT_READ_BYTES a look, and never for longer
 * than TRANSCRIPT_WATCH_MS; a look that fails is tried again at the next tick.
 */
import { open, stat } from 'node:fs/promises';
import { stateEvent, type AdapterRuntime, type HookOutcome } from '../contract/adapter.js';
import { readClaudeHook, QUESTION_TOOL } from './events.js';
import { readClaudeStopFailure, type StopFailureMark } from './stop-failure.js';

/** How often an open question's transcript is looked at. */
export const TRANSCRIPT_POLL_MS = 500;
/** Most bytes read of a transcript in one look. */
const TRANSCRIPT_READ_BYTES = 1024 * 1024;
/** How long a transcript is looked at for one question. */
const TRANSCRIPT_WATCH_MS = 30 * 60_000;

/** The events after which a question of Claude's is over: Claude moved on. */
const MOVES_ON = new Set(['UserPromptSubmit', 'PreToolUse', 'Stop', 'StopFailure', 'SessionEnd', 'SessionStart']);

interface OpenQuestion {
  /** The tool call it is about (`tool_use_id`), when the `PreToolUse` before it named one. */
  readonly call: string | null;
  readonly tool: string;
  /** Where Claude writes the conversation, and how far it was when the question opened (null: not yet known). */
  readonly transcript: string | null;
  offset: number | null;
  readonly since: number;
  timer: NodeJS.Timeout | null;
}

export class ClaudeReader {
  /** The last tool call each session started. */
  private readonly calls = new Map<string, { id: string; tool: string }>();
  private readonly open = new Map<string, OpenQuestion>();
  /** Where each session's last stop was read from in its transcript. */
  private readonly stopMarks = new Map<string, StopFailureMark>();

  constructor(private readonly rt: Pick<AdapterRuntime, 'report' | 'now' | 'log'>) {}

  read(session: string, f: Readonly<Record<string, string>>): HookOutcome {
    const question = this.open.get(session) ?? null;
    const outcome = readClaudeHook(f, question !== null);
    const event = f.hook_event_name ?? '';
    if (event === 'StopFailure') this.stopFailed(session, f);
    if (event === 'PreToolUse' && f.tool_use_id) this.calls.set(session, { id: f.tool_use_id, tool: f.tool_name ?? '' });
    if (outcome.ask !== undefined) {
      this.opened(session, f);
      return outcome;
    }
    if (question === null) return outcome;
    if ((event === 'PostToolUse' || event === 'PostToolUseFailure') && this.isItsCall(question, f)) {
      // The asked call ran (or failed) without tether's answer: the person at the terminal allowed it.
      this.close(session);
      const answered = question.tool === QUESTION_TOOL ? f.answer : event === 'PostToolUse' ? 'allowed' : undefined;
      return { ...outcome, askEnded: { why: 'terminal', ...(answered !== undefined ? { answered } : {}) } };
    }
    if (MOVES_ON.has(event)) this.close(session);
    return outcome;
  }

  /** The turn ended on an API error: its stop, once the transcript said which (a usage limit, or another error). */
  private stopFailed(session: string, f: Readonly<Record<string, string>>): void {
    void readClaudeStopFailure(f, this.stopMarks.get(session) ?? null).then(({ stop, mark }) => {
      if (mark !== null) this.stopMarks.set(session, mark);
      this.rt.report(session, { events: [], stop });
    });
  }

  private isItsCall(q: OpenQuestion, f: Readonly<Record<string, string>>): boolean {
    return q.call !== null ? f.tool_use_id === q.call : f.tool_name === q.tool;
  }

  private opened(session: string, f: Readonly<Record<string, string>>): void {
    this.close(session);
    const call = this.calls.get(session);
    const tool = f.tool_name ?? '';
    const transcript = f.transcript_path?.startsWith('/') ? f.transcript_path : null;
    const q: OpenQuestion = {
      call: call?.tool === tool ? call.id : null,
      tool,
      transcript,
      offset: null,
      since: this.rt.now(),
      timer: null,
    };
    this.open.set(session, q);
    if (transcript === null || q.call === null) return;
    void stat(transcript).then(
      (st) => {
        if (this.open.get(session) !== q) return;
        q.offset = st.size;
        q.timer = setInterval(() => void this.look(session, q), TRANSCRIPT_POLL_MS);
        q.timer.unref();
      },
      () => undefined,
    );
  }

  /** Looks at the transcript for the asked call's result: a refusal at the terminal. */
  private async look(session: string, q: OpenQuestion): Promise<void> {
    if (this.open.get(session) !== q || q.offset === null) return;
    if (this.rt.now() - q.since > TRANSCRIPT_WATCH_MS) return this.close(session);
    let text: string;
    try {
      const file = await open(q.transcript!, 'r');
      try {
        const buf = Buffer.alloc(TRANSCRIPT_READ_BYTES);
        const { bytesRead } = await file.read(buf, 0, buf.length, q.offset);
        text = buf.subarray(0, bytesRead).toString('utf8');
      } finally {
        await file.close();
      }
    } catch {
      return;
    }
    if (this.open.get(session) !== q) return;
    const refused = text.split('\n').some((line) => line.includes(`"tool_use_id":"${q.call}"`) && line.includes('"is_error":true'));
    if (!refused) return;
    this.close(session);
    this.rt.log.debug({ session }, "Claude's question was refused at the terminal");
    // Claude stops and waits for the person after a refusal.
    this.rt.report(session, { events: [stateEvent('agent.end', { idle: true })], askEnded: { why: 'terminal', answered: 'no' } });
  }

  private close(session: string): void {
    const q = this.open.get(session);
    if (q?.timer) clearInterval(q.timer);
    this.open.delete(session);
  }

  forget(session: string): void {
    this.close(session);
    this.calls.delete(session);
    this.stopMarks.delete(session);
  }

  stop(): void {
    for (const session of [...this.open.keys()]) this.close(session);
  }
}
