/**
 * Prompts in the daemon (docs/api.md "Prompts"): the prompt service over the agents' reports and
 * the sessions' panes, kept in the sessions' tmux option and records, its changes told to every
 * client of the session, its failures pushed, its machines on /ops. Wiring only.
 */
import type { FastifyInstance } from 'fastify';
import type { SidecarSystem } from '../actors/system.js';
import type { AgentService } from '../agent/hub/agent-service.js';
import type { Logger } from '../log.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import type { OpsInspector } from '../ops/inspector.js';
import type { PromptRecord } from '../protocol/prompt.js';
import type { SessionRecords } from '../restore/records.js';
import type { RecordKeeper } from '../restore/record-keeper.js';
import { promptStoreOf, setSessionOption } from '../service/prompts/prompt-store.js';
import { PromptsService } from '../service/prompts/prompts.service.js';
import type { SessionsService } from '../service/sessions/sessions.service.js';
import type { StreamHub } from '../stream/stream-hub.js';
import type { TmuxCli } from '../tmux/exec.js';
import { SESSION_OPTIONS } from '../tmux/layout.js';
import { encodePromptsOption, readPromptsOption } from '../tmux/sessions/prompts-option.js';
import { promptsRoutes } from '../transport/routes/prompts.routes.js';

export interface PromptsWiring {
  readonly agents: AgentService;
  readonly system: SidecarSystem;
  readonly cli: TmuxCli;
  readonly sessions: SessionsService;
  readonly hub: StreamHub;
  readonly records: SessionRecords;
  readonly keeper: RecordKeeper;
  readonly ops: OpsInspector;
  readonly now: () => number;
  readonly log: Logger;
}

/** The prompt service of one daemon run, the plugin of its routes, and its failures for push. */
export function startPrompts(w: PromptsWiring): {
  service: PromptsService;
  plugin: (app: FastifyInstance) => Promise<void>;
  onFailed: (listener: (id: string, prompt: PromptRecord) => void) => () => void;
  stop: () => void;
} {
  const failed = new Set<(id: string, prompt: PromptRecord) => void>();
  const service = new PromptsService({
    agents: {
      current: (id) => w.agents.states.current(id),
      subscribeEvery: (listener) => w.agents.states.subscribeEvery(listener),
      onUserMessage: (listener) => w.agents.onUserMessage(listener),
      reportsPrompts: (id) => w.agents.reportsPrompts(id),
    },
    known: async (id) => void (await w.sessions.get(id)),
    panes: {
      input: (id, message) => w.sessions.input(id, message),
      activity: (id) => w.system.session(id)?.activity() ?? null,
      bracketedPaste: (id) => w.system.session(id)?.bracketedPaste() ?? null,
      screen: async (id) => (await w.system.captureVisible(id))?.toString('utf8') ?? null,
      exited: (id) => w.system.session(id)?.exited ?? false,
    },
    store: promptStoreOf({
      tmux: {
        read: (id) => readPromptsOption(w.cli, id),
        write: (id, stored) => setSessionOption(w.system, id, SESSION_OPTIONS.prompts, encodePromptsOption(stored)),
      },
      record: {
        read: (id) => w.records.read(id)?.prompts ?? null,
        write: (id, stored) => w.keeper.notePrompts(id, stored),
      },
    }),
    now: w.now,
    log: w.log.child({ part: 'prompts' }),
    inspect: (id, prompt) => w.ops.observer({ label: `prompt:${prompt}`, parent: sessionActorId(id) }),
    failed: (id, prompt) => failed.forEach((l) => l(id, prompt)),
  });
  const unwatchChanges = service.onChange((id, prompt) => w.hub.tell(id, { type: 'prompt', prompt }));
  // An agent that exits fails the prompts still waiting; a deleted session is forgotten with the rest (session-events.ts).
  const unwatchEnded = w.system.onSessionEnded((id, why) => service.agentExited(id, why));
  return {
    service,
    plugin: async (app) => void (await app.register(promptsRoutes, { prompts: service })),
    onFailed: (listener) => {
      failed.add(listener);
      return () => failed.delete(listener);
    },
    stop: () => {
      unwatchEnded();
      unwatchChanges();
      service.stop();
    },
  };
}
