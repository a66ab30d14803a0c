/**
 * The hook report: the one line an agent's hook program or plugin (docs/agents.md, each agent)
 * sends on the agent socket, and the daemon's one-line answer. A hook program lives for one
 * event, so each report is a connection of its own that names its pane (`$TMUX_PANE`, which
 * tmux sets for every process in the pane) and carries the agent's event as plain fields.
 *
 * This module imports nothing: the hook programs load it on every event of the agent, which
 * waits for them (docs/agents.md "How a hook reports").
 *
 * Invariants: a report holds at most `MAX_HOOK_FIELDS` string fields of at most
 * `MAX_HOOK_FIELD_CHARS` characters each (the program cuts longer ones, the daemon refuses
 * them); nothing but those fields travels.
 */

export const HOOK_REPORT_VERSION = 1;
/** Fields one report may carry. */
export const MAX_HOOK_FIELDS = 16;
/** Longest field value (a permission question, a prompt's start, a path). */
export const MAX_HOOK_FIELD_CHARS = 4096;
/** Longest field name. */
export const MAX_HOOK_FIELD_NAME_CHARS = 64;
/** An agent kind as a report names it: a short lowercase word. */
export const AGENT_KIND_PATTERN = '^[a-z][a-z0-9-]{0,31}$';
/** Variable tether sets in the panes it creates: where the daemon's agent socket is. */
export const AGENT_SOCKET_ENV = 'TETHER_AGENT_SOCKET';

/** Hook program -> daemon. */
export interface HookReport {
  readonly type: 'hook';
  readonly v: number;
  /** Which adapter reads `fields`: its kind (src/agent/contract/adapters.ts). */
  readonly agent: string;
  /** `$TMUX_PANE`: `%<n>`. */
  readonly pane: string;
  /** The tmux server's socket path (the first field of `$TMUX`). */
  readonly tmuxSocket: string;
  /**
   * The tmux server's pid (the second field of `$TMUX`), when the pane's environment names it. Pane
   * ids are per server and a new server numbers its panes again: a report from a server that has
   * since exited (an agent's last hook, run as it is killed) is refused, not read as the new one's.
   */
  readonly server?: number;
  readonly pid: number;
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * A conversation id tether may put on an agent's command line (`--resume <id>`): letters,
 * digits, `-` and `_`, starting with a letter or digit (never read as an option), at most 128.
 */
export const CONVERSATION_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$';
const CONVERSATION_ID_RE = new RegExp(CONVERSATION_ID_PATTERN);

export function isConversationId(id: string): boolean {
  return CONVERSATION_ID_RE.test(id);
}

/** The string fields of `value` worth sending, cut to the limits (`keep` names them, in order). */
export function pickHookFields(value: unknown, keep: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) return out;
  const o = value as Record<string, unknown>;
  for (const key of keep.slice(0, MAX_HOOK_FIELDS)) {
    const v = o[key];
    if (typeof v === 'string') out[key] = v.slice(0, MAX_HOOK_FIELD_CHARS);
    else if (typeof v === 'boolean' || typeof v === 'number') out[key] = String(v);
  }
  return out;
}

/** Whether `v` is a plain JSON object (a hook input's nested fields are read through it). */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` when it is a string, cut to `max` characters; else null. */
export const textOf = (v: unknown, max: number): string | null => (typeof v === 'string' ? v.slice(0, max) : null);

/**
 * `make(max)` as JSON of at most MAX_HOOK_FIELD_CHARS, a hook program's derived field: its texts are
 * cut shorter (`max` 200, 80, 30, 10) until it fits; null when it never does.
 */
export function fittedJson(make: (max: number) => unknown): string | null {
  for (const max of [200, 80, 30, 10]) {
    const json = JSON.stringify(make(max));
    if (json.length <= MAX_HOOK_FIELD_CHARS) return json;
  }
  return null;
}
