/**
 * The daemon's side of a hook report (hook-wire.ts): one line from a hook program or plugin,
 * decoded with every field checked against its limit. A report breaking one is refused whole.
 */
import { PANE_ID_RE } from '../../tmux/layout.js';
import {
  AGENT_KIND_PATTERN,
  HOOK_REPORT_VERSION,
  MAX_HOOK_FIELDS,
  MAX_HOOK_FIELD_CHARS,
  MAX_HOOK_FIELD_NAME_CHARS,
  type HookReport,
} from './hook-wire.js';
import { bad, MAX_PATH_CHARS, MAX_SHORT_CHARS, positiveInt, str } from './wire-fields.js';

const AGENT_KIND_RE = new RegExp(AGENT_KIND_PATTERN);

/** A `hook` line's object (its `type` read already). */
export function decodeHookReport(o: Record<string, unknown>): HookReport {
  if (o.v !== HOOK_REPORT_VERSION) throw bad(`v: this daemon reads hook reports of version ${HOOK_REPORT_VERSION}`);
  const agent = o.agent;
  if (typeof agent !== 'string' || !AGENT_KIND_RE.test(agent)) throw bad('agent: must be an agent kind (a short lowercase word)');
  const pane = str(o, 'pane', MAX_SHORT_CHARS)!;
  if (!PANE_ID_RE.test(pane)) throw bad('pane: must look like %<number>');
  const pid = positiveInt(o, 'pid', '')!;
  const server = positiveInt(o, 'server', " (the tmux server's pid)", true);
  const f = o.fields;
  if (!f || typeof f !== 'object' || Array.isArray(f)) throw bad('fields: must be an object');
  const entries = Object.entries(f as Record<string, unknown>);
  if (entries.length > MAX_HOOK_FIELDS) throw bad(`fields: more than ${MAX_HOOK_FIELDS}`);
  const kept: [string, string][] = [];
  for (const [key, value] of entries) {
    if (key.length > MAX_HOOK_FIELD_NAME_CHARS || !/^[A-Za-z0-9_-]+$/.test(key)) throw bad('fields: a field name is not a short word');
    if (typeof value !== 'string' || value.length > MAX_HOOK_FIELD_CHARS)
      throw bad(`fields/${key}: must be a string of at most ${MAX_HOOK_FIELD_CHARS} characters`);
    kept.push([key, value]);
  }
  // fromEntries: a field named like an Object property (`__proto__`) stays a plain field.
  const fields = Object.fromEntries(kept);
  const tmuxSocket = str(o, 'tmuxSocket', MAX_PATH_CHARS)!;
  return {
    type: 'hook',
    v: HOOK_REPORT_VERSION,
    agent,
    pane,
    tmuxSocket,
    ...(server !== undefined ? { server } : {}),
    pid,
    fields,
  };
}
