/**
 * Gemini CLI's hook events as agent state (docs/agents.md "Gemini CLI"): what each event means,
 * the session's title (its first prompt), and what only a sequence of reports tells about an open ask (the questions of the `ask_user`
 * call before it, which call it is about, how it ended when tether did not type the answer).
 * Gemini waits on its hooks, so the program only copies fields and the meaning is decided here.
 *
 * Invariant: an event tether does not know, or one that says nothing about the state, changes
 * nothing; a conversation id is kept only in a shape safe for `--resume <id>`.
 */
import { NO_OUTCOME, stateEvent, type AdapterRuntime, type HookOutcome } from '../contract/adapter.js';
import { isConversationId } from '../wire/hook-wire.js';
import { geminiPermission, geminiQuestion, GEMINI_QUESTION_TOOL } from './asks.js';
import { readGeminiTurnFailure } from './turn-failure.js';

type Fields = Readonly<Record<string, string>>;

function facts(f: Fields): Omit<HookOutcome, 'events'> {
  const id = f.session_id;
  const cwd = f.cwd;
  return {
    ...(id !== undefined && isConversationId(id) ? { conversation: id } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
  };
}

/** A tool call as the hooks name it: Gemini's hooks give a call no id, so calls pair by tool. */
const callOf = (f: Fields): { id: string; tool: string } => ({ id: f.tool_name || 'tool', tool: f.tool_name || 'tool' });

/** What one Gemini CLI hook report means, without what only the reports before it tell. */
export function readGeminiHook(f: Fields): HookOutcome {
  const base = facts(f);
  switch (f.hook_event_name) {
    case 'SessionStart':
      return { ...base, events: [stateEvent('agent.ready')] };
    case 'BeforeAgent':
      return { ...base, events: [stateEvent('agent.start')], ...(f.prompt ? { userMessage: f.prompt } : {}) };
    case 'BeforeTool':
      return { ...base, events: [stateEvent('tool.start', callOf(f))] };
    case 'AfterTool':
      return { ...base, events: [stateEvent('tool.end', { id: callOf(f).id })] };
    case 'AfterAgent':
      return { ...base, events: [stateEvent('agent.end', { idle: true })] };
    case 'Notification':
      return f.notification_type === 'ToolPermission'
        ? { ...base, events: [stateEvent('agent.end', { idle: true })], asks: f.message || 'a confirmation' }
        : { ...base, events: [] };
    case 'SessionEnd':
      return { ...base, events: [], gone: true };
    default:
      return base.conversation !== undefined || base.cwd !== undefined ? { ...base, events: [] } : NO_OUTCOME;
  }
}

interface SessionMemory {
  /** The tool the last `BeforeTool` named, and an `ask_user` call's questions. */
  call: { tool: string; concern?: string; detail?: string; questions?: string } | null;
  /** The tool of the open ask, when there is one. */
  asking: string | null;
  /** Whether the session's title was given (its first prompt). */
  titled: boolean;
}

/** Gemini's reports as the daemon reads them, session by session. */
export class GeminiReader {
  private readonly sessions = new Map<string, SessionMemory>();

  constructor(private readonly rt: Pick<AdapterRuntime, 'report'>) {}

  read(session: string, f: Fields): HookOutcome {
    const mem = this.sessions.get(session) ?? { call: null, asking: null, titled: false };
    this.sessions.set(session, mem);
    const event = f.hook_event_name ?? '';
    let outcome = readGeminiHook(f);
    if (event === 'BeforeAgent' && !mem.titled && f.prompt && !f.prompt.startsWith('/')) {
      // Gemini titles a conversation only when it is left (its summary): the first prompt names it.
      mem.titled = true;
      outcome = { ...outcome, title: f.prompt };
    }
    if (event === 'BeforeTool') {
      mem.call = {
        tool: f.tool_name ?? '',
        ...(f.concern !== undefined ? { concern: f.concern } : {}),
        ...(f.detail !== undefined ? { detail: f.detail } : {}),
        ...(f.questions !== undefined ? { questions: f.questions } : {}),
      };
    }
    if (event === 'Notification' && f.notification_type === 'ToolPermission') return this.opened(mem, f, outcome);
    if (event === 'AfterAgent' && f.transcript_path?.startsWith('/')) outcome = this.ended(session, f.transcript_path, outcome);
    const asked = mem.asking;
    if (asked === null) return outcome;
    if (event === 'AfterTool' && f.tool_name === asked) {
      // The asked call ran without tether's answer: the person at the terminal allowed (or answered) it.
      mem.asking = null;
      return { ...outcome, askEnded: { why: 'terminal', answered: asked === GEMINI_QUESTION_TOOL ? 'answered' : 'allowed' } };
    }
    if (event === 'AfterAgent' || event === 'BeforeAgent' || event === 'SessionStart' || event === 'SessionEnd') {
      // Gemini went on without running the call: it was refused (Escape) at the terminal.
      mem.asking = null;
      return { ...outcome, askEnded: { why: 'terminal', answered: 'no' } };
    }
    return outcome;
  }

  /**
   * The turn ended, well or on an API error: its chat file says which (turn-failure.ts), so the
   * end (or the stop) is reported once that was read, the rest of the report at once.
   */
  private ended(session: string, transcript: string, outcome: HookOutcome): HookOutcome {
    const end = outcome.events;
    void readGeminiTurnFailure(transcript).then((stop) => this.rt.report(session, stop ? { events: [], stop } : { events: end }));
    return { ...outcome, events: [] };
  }

  /** The dialog is on screen now (the notification runs while it shows): the ask, with its choices. */
  private opened(mem: SessionMemory, f: Fields, waiting: HookOutcome): HookOutcome {
    const call = mem.call;
    const question = f.confirm === GEMINI_QUESTION_TOOL || call?.tool === GEMINI_QUESTION_TOOL;
    const tool = question ? GEMINI_QUESTION_TOOL : call?.tool || 'tool';
    const ask = question ? geminiQuestion(call?.questions) : geminiPermission(tool, f.concern ?? call?.concern, call?.detail);
    mem.asking = tool;
    if (ask === null) return { ...waiting, asks: 'a question' };
    return { ...waiting, events: [], ask, asks: question ? 'a question' : `permission to use ${tool}` };
  }

  forget(session: string): void {
    this.sessions.delete(session);
  }
}
