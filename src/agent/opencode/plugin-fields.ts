/**
 * What tether's opencode plugin (plugin.ts) sends of each event opencode's bus publishes: the
 * few events tether reads, as a hook report's short fields (docs/agents.md "opencode"). Pure: the
 * plugin keeps what it last sent of each conversation so that repeated events (a status that did
 * not change, a session update without a new title) are not sent again.
 *
 * Invariant: at most MAX_HOOK_FIELDS fields, each cut to MAX_HOOK_FIELD_CHARS; JSON fields are cut
 * so that they still parse (their list shortened), never mid-string.
 */
import { MAX_HOOK_FIELD_CHARS } from '../wire/hook-wire.js';

/** An event of opencode's bus, as a plugin's `event` hook gets it. */
export interface OpencodeBusEvent {
  readonly type: string;
  readonly properties?: unknown;
}

/** What the plugin remembers between events, per conversation: its last status and title. */
export interface SentMemory {
  readonly status: Map<string, string>;
  readonly title: Map<string, string>;
}

export function newSentMemory(): SentMemory {
  return { status: new Map(), title: new Map() };
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v.slice(0, MAX_HOOK_FIELD_CHARS) : undefined);

/** `value` as JSON of at most MAX_HOOK_FIELD_CHARS: a list loses its last items until it fits. */
export function boundedJson(value: readonly unknown[]): string {
  let items = [...value];
  let text = JSON.stringify(items);
  while (text.length > MAX_HOOK_FIELD_CHARS && items.length > 0) {
    items = items.slice(0, -1);
    text = JSON.stringify(items);
  }
  return text.length > MAX_HOOK_FIELD_CHARS ? '[]' : text;
}

function clean(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/** A question's words and its options' labels, as tether reads them. */
function questionsOf(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [];
  const text = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : '');
  return value.map((q) => {
    const o = obj(q);
    const options = Array.isArray(o.options) ? o.options.map((x) => text(obj(x).label, 200)) : [];
    return { question: text(o.question, 500), header: text(o.header, 100), options, multiple: o.multiple === true };
  });
}

/** The fields of one event the daemon reads, or null for an event it does not (or one already sent). */
export function eventFields(event: OpencodeBusEvent, sent: SentMemory): Record<string, string> | null {
  const p = obj(event.properties);
  const session = str(p.sessionID);
  switch (event.type) {
    case 'session.created':
    case 'session.updated': {
      const info = obj(p.info);
      const id = str(info.id) ?? session;
      const title = str(info.title);
      if (id === undefined) return null;
      if (event.type === 'session.updated' && (title === undefined || sent.title.get(id) === title)) return null;
      if (title !== undefined) sent.title.set(id, title);
      return clean({ type: event.type, session: id, parent: str(info.parentID), title, cwd: str(info.directory) });
    }
    case 'session.status': {
      const status = str(obj(p.status).type);
      if (session === undefined || status === undefined || sent.status.get(session) === status) return null;
      sent.status.set(session, status);
      return { type: event.type, session, status };
    }
    case 'session.idle':
      return session === undefined ? null : { type: event.type, session };
    case 'session.error': {
      const error = obj(p.error);
      const data = obj(error.data);
      const code = typeof data.statusCode === 'number' ? String(data.statusCode) : undefined;
      return clean({ type: event.type, session, error: str(error.name), message: str(data.message), code });
    }
    case 'message.part.updated': {
      const part = obj(p.part);
      if (part.type !== 'tool') return null;
      const status = str(obj(part.state).status);
      if (status === 'pending') return null;
      return clean({ type: event.type, session: str(part.sessionID) ?? session, tool: str(part.tool), call: str(part.callID), status });
    }
    case 'permission.asked': {
      const metadata = obj(p.metadata);
      return clean({
        type: event.type,
        session,
        id: str(p.id),
        permission: str(p.permission),
        command: str(metadata.command) ?? str(metadata.filepath) ?? str(metadata.url),
        patterns: Array.isArray(p.patterns) ? boundedJson(p.patterns.map(String)) : undefined,
        call: str(obj(p.tool).callID),
      });
    }
    case 'permission.replied':
      return clean({ type: event.type, session, id: str(p.requestID) ?? str(p.permissionID) ?? str(p.id), reply: str(p.reply) });
    case 'question.asked':
      return clean({
        type: event.type,
        session,
        id: str(p.id),
        questions: boundedJson(questionsOf(p.questions)),
        call: str(obj(p.tool).callID),
      });
    case 'question.replied':
    case 'question.rejected': {
      const answers = Array.isArray(p.answers) ? boundedJson(p.answers) : undefined;
      return clean({ type: event.type, session, id: str(p.requestID) ?? str(p.id), answers });
    }
    default:
      return null;
  }
}

/**
 * The fields of opencode's `chat.message` hook (a prompt the user submitted: its message's parts):
 * the text of its non-synthetic text parts, cut to MAX_HOOK_FIELD_CHARS; null for a message with
 * no text (only files).
 */
export function chatMessageFields(input: unknown, output: unknown): Record<string, string> | null {
  const parts = obj(output).parts;
  if (!Array.isArray(parts)) return null;
  const text = parts
    .map(obj)
    .filter((p) => p.type === 'text' && p.synthetic !== true && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
  if (text.trim() === '') return null;
  return clean({ type: 'chat.message', session: str(obj(input).sessionID), text: text.slice(0, MAX_HOOK_FIELD_CHARS) });
}
