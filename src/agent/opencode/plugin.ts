/**
 * tether's opencode plugin (docs/agents.md "opencode"): opencode loads it beside the user's own
 * plugins (tether names it in `OPENCODE_CONFIG_CONTENT`, which opencode merges with the user's
 * config; their files are never edited). It sends the events tether reads to the daemon's agent
 * socket as hook reports, one connection each, in the order opencode published them.
 *
 * Invariants: never throws into opencode and never prints; each report gives up after about a
 * second (sendHookReport); outside a pane tether can place (no `TMUX_PANE`) or without the agent
 * socket's path it sends nothing. opencode calls every export of a plugin module: this one
 * exports its plugin only.
 */
import { hookReport, sendHookReport } from '../wire/hook-send.js';
import { chatMessageFields, eventFields, newSentMemory, type OpencodeBusEvent } from './plugin-fields.js';

/** The kind of tether's opencode adapter (the `agent` of its reports). */
const KIND = 'opencode';

interface PluginInput {
  readonly directory?: string;
}

interface PluginHooks {
  event: (arg: { event: OpencodeBusEvent }) => Promise<void>;
  /** A prompt the user submitted, with its parts (the text tether's queued prompt is confirmed by). */
  'chat.message': (input: unknown, output: unknown) => Promise<void>;
}

export const TetherPlugin = (input: PluginInput): Promise<PluginHooks> => {
  const sent = newSentMemory();
  let queue: Promise<void> = Promise.resolve();
  const send = (fields: Record<string, string>): void => {
    const report = hookReport(KIND, fields, process.env, process.pid);
    if (report === null) return;
    queue = queue.then(() => sendHookReport(report, process.env)).catch(() => undefined);
  };
  send({ type: 'tether.hello', ...(typeof input.directory === 'string' ? { cwd: input.directory } : {}) });
  return Promise.resolve({
    event: ({ event }) => {
      try {
        const fields = eventFields(event, sent);
        if (fields !== null) send(fields);
      } catch {
        // A report that could not be made never disturbs opencode.
      }
      return Promise.resolve();
    },
    'chat.message': (hookInput, output) => {
      try {
        const fields = chatMessageFields(hookInput, output);
        if (fields !== null) send(fields);
      } catch {
        // A report that could not be made never disturbs opencode.
      }
      return Promise.resolve();
    },
  });
};
