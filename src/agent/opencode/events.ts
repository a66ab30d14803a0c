/**
 * opencode's events as agent state (docs/agents.md "opencode"): what tether's plugin reports
 * (plugin-fields.ts) becomes the agent-state machine's events, its asks and the conversation a
 * restore reopens. A reader keeps, per tether session, what the events before told: the
 * conversations that are subagents' (their events change nothing), the tool calls it reported as
 * started, and which call each open permission is about.
 *
 * Invariants: a tool call is reported started at most once (opencode may publish its `running`
 * after the permission asked about it: the ask already started it) and ended only when it was
 * started (a rejected call's error ends nothing: the answer already moved the state); a
 * subagent's conversation never becomes the session's.
 */
import { NO_OUTCOME, stateEvent, type HookOutcome } from '../contract/adapter.js';
import { isConversationId } from '../wire/hook-wire.js';
import { opencodePermission, opencodeQuestion, readQuestions } from './asks.js';
import { opencodeStop } from './stops.js';

/** opencode's question tool: it is the ask itself, not a tool call the state shows. */
const QUESTION_TOOL = 'question';
/** The titles opencode gives a conversation before it has generated one. */
const PLACEHOLDER_TITLE = /^(New session|Child session) - \d{4}-\d\d-\d\dT/;
/** Most conversations and calls remembered per session (a long session forgets the oldest). */
const MAX_REMEMBERED = 256;

interface SessionMemory {
  readonly children: Set<string>;
  readonly started: Set<string>;
  /** The call each open permission is about, by the permission's id. */
  readonly permissions: Map<string, string>;
  /** A turn runs (opencode said `busy`, not yet idle): opencode says idle twice at a turn's end. */
  busy: boolean;
  /** The turn ended on an error opencode gave up on: its end is that stop, not a finished turn. */
  stopped: boolean;
}

function remember<T>(set: Set<T>, value: T): void {
  set.add(value);
  if (set.size > MAX_REMEMBERED) set.delete(set.values().next().value as T);
}

export class OpencodeReader {
  private readonly sessions = new Map<string, SessionMemory>();

  private memory(session: string): SessionMemory {
    let m = this.sessions.get(session);
    if (!m) {
      m = { children: new Set(), started: new Set(), permissions: new Map(), busy: false, stopped: false };
      this.sessions.set(session, m);
    }
    return m;
  }

  /** What one report of the plugin in `session` means. */
  read(session: string, f: Readonly<Record<string, string>>): HookOutcome {
    const m = this.memory(session);
    const conv = f.session;
    // opencode (re)started with tether's plugin, a reopened conversation too: ready for a prompt.
    if (f.type === 'tether.hello') {
      this.sessions.delete(session);
      return { events: [stateEvent('agent.ready')], ...(f.cwd !== undefined ? { cwd: f.cwd } : {}) };
    }
    if (conv !== undefined && f.parent !== undefined) remember(m.children, conv);
    if (conv !== undefined && m.children.has(conv)) return NO_OUTCOME;
    const conversation = conv !== undefined && isConversationId(conv) ? { conversation: conv } : {};
    switch (f.type) {
      case 'session.created':
      case 'session.updated': {
        const title = f.title !== undefined && !PLACEHOLDER_TITLE.test(f.title) ? { title: f.title } : {};
        return { events: [], ...conversation, ...title, ...(f.cwd !== undefined ? { cwd: f.cwd } : {}) };
      }
      case 'session.status':
        if (f.status !== 'busy') return NO_OUTCOME;
        m.busy = true;
        m.stopped = false;
        return { events: [stateEvent('agent.start')], ...conversation };
      case 'session.idle': {
        m.started.clear();
        m.permissions.clear();
        // The turn's end once; after an error stop, the stop is its end: the agent waits, held by it.
        const end = m.busy && !m.stopped ? [stateEvent('agent.end', { idle: true })] : [];
        m.busy = false;
        return { events: end, ...conversation };
      }
      case 'session.error': {
        const stop = opencodeStop(f);
        if (stop === null) return NO_OUTCOME;
        m.stopped = true;
        m.started.clear();
        return { events: [], stop, ...conversation };
      }
      case 'message.part.updated':
        return this.toolPart(m, f);
      case 'chat.message':
        // A prompt the user submitted (its text confirms a prompt tether typed).
        return f.text !== undefined ? { events: [], userMessage: f.text, ...conversation } : NO_OUTCOME;
      case 'permission.asked': {
        const call = f.call;
        const start =
          call !== undefined && !m.started.has(call) ? [stateEvent('tool.start', { id: call, tool: f.permission ?? 'tool' })] : [];
        if (call !== undefined) remember(m.started, call);
        if (f.id !== undefined && call !== undefined) m.permissions.set(f.id, call);
        const ask = opencodePermission(f.permission ?? 'tool', f.command ?? patternsOf(f.patterns));
        return { events: start, ask, asks: `${ask.tool ?? 'tool'}: ${ask.concern}`, ...conversation };
      }
      case 'permission.replied': {
        const call = f.id !== undefined ? m.permissions.get(f.id) : undefined;
        if (f.id !== undefined) m.permissions.delete(f.id);
        // A rejected call ends with an error opencode publishes after: it ends nothing more.
        if (f.reply === 'reject' && call !== undefined) m.started.delete(call);
        return { events: [], askEnded: { why: 'terminal', ...(f.reply !== undefined ? { answered: f.reply } : {}) } };
      }
      case 'question.asked': {
        const questions = readQuestions(f.questions);
        const ask = opencodeQuestion(questions);
        if (ask !== null) return { events: [], ask, asks: ask.concern, ...conversation };
        // A question tether cannot answer: the person answers it at the terminal.
        return { events: [stateEvent('agent.end', { idle: true })], asks: 'a question', ...conversation };
      }
      case 'question.replied':
      case 'question.rejected':
        return { events: [], askEnded: { why: 'terminal', ...(f.answers !== undefined ? { answered: f.answers } : {}) } };
      default:
        return NO_OUTCOME;
    }
  }

  private toolPart(m: SessionMemory, f: Readonly<Record<string, string>>): HookOutcome {
    const call = f.call;
    if (call === undefined || f.tool === QUESTION_TOOL) return NO_OUTCOME;
    if (f.status === 'running') {
      if (m.started.has(call)) return NO_OUTCOME;
      remember(m.started, call);
      return { events: [stateEvent('tool.start', { id: call, tool: f.tool ?? 'tool' })] };
    }
    if ((f.status === 'completed' || f.status === 'error') && m.started.delete(call))
      return { events: [stateEvent('tool.end', { id: call })] };
    return NO_OUTCOME;
  }

  forget(session: string): void {
    this.sessions.delete(session);
  }
}

/** The patterns of a permission (JSON), as its concern when it names no command. */
function patternsOf(json: string | undefined): string | undefined {
  if (json === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) && v.length > 0 ? v.map(String).join(', ') : undefined;
  } catch {
    return undefined;
  }
}
