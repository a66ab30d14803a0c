/**
 * Answers in the daemon (docs/api.md "Asks", "Continue"): the answer service over the agent
 * hub's asks and the sessions' panes, the continue service that types a scheduled continue (an
 * answer of the device that chose it), and the answer log in the data dir they share. Part of the
 * composition root.
 */
import type { FastifyInstance } from 'fastify';
import type { InspectionEvent } from 'xstate';
import type { SidecarSystem } from '../actors/system.js';
import type { AgentStates, AnswerDesk } from '../agent/hub/agent-service.js';
import type { Logger } from '../log.js';
import type { ContinueSchedule } from '../protocol/continue.js';
import { AnswerLog, answerLogPath } from '../service/answers/answer-log.js';
import { AnswersService } from '../service/answers/answers.service.js';
import { ContinueService } from '../service/continue/continue.service.js';
import { statesWithContinue } from '../service/continue/continue-views.js';
import { LimitResets } from '../service/continue/limit-reset.js';
import type { SessionsService } from '../service/sessions/sessions.service.js';
import type { LinePane } from '../service/prompts/typed-line.js';
import type { AgentStateSource } from '../stream/stream-hub.js';
import type { TmuxCli } from '../tmux/exec.js';
import { readContinueOption, writeContinueOption } from '../tmux/sessions/continue-option.js';
import { answersRoutes } from '../transport/routes/answers.routes.js';
import { continueRoutes } from '../transport/routes/continue.routes.js';

export interface AnswersWiring {
  /** The agents' states, and the desk where an ask's answer is claimed. */
  readonly agents: { readonly states: AgentStates; readonly desk: AnswerDesk };
  readonly system: SidecarSystem;
  readonly cli: TmuxCli;
  readonly sessions: SessionsService;
  readonly dataDir: string;
  readonly now: () => number;
  readonly log: Logger;
  /** A session's continue was written to tmux (the session's record keeps it for a restore). */
  readonly kept?: (id: string, schedule: ContinueSchedule) => void;
  /** XState inspection of a session's continue machine (the /ops view). */
  readonly inspect: (id: string) => (ev: InspectionEvent) => void;
}

/** The answer and continue services of one daemon run, the plugin of their routes, and the views that show a continue. */
export function startAnswers(w: AnswersWiring): {
  service: AnswersService;
  continues: ContinueService;
  plugin: (app: FastifyInstance) => Promise<void>;
  /** The agent states, with each session's continue. */
  states: AgentStateSource;
  /** Usage limits whose reset passed with nothing scheduled (for push). */
  resets: LimitResets;
  stop: () => void;
} {
  const answers = new AnswerLog(answerLogPath(w.dataDir), w.log);
  const panes: LinePane = {
    input: (id, message) => w.sessions.input(id, message),
    activity: (id) => w.system.session(id)?.activity() ?? null,
    bracketedPaste: (id) => w.system.session(id)?.bracketedPaste() ?? null,
  };
  const service = new AnswersService({
    hub: w.agents.desk,
    panes,
    answers,
    now: w.now,
    log: w.log.child({ part: 'answers' }),
  });
  const continues = new ContinueService({
    agents: {
      current: (id) => w.agents.states.current(id),
      stopOf: (id) => w.agents.states.stopOf(id),
      subscribeEvery: (listener) => w.agents.states.subscribeEvery(listener),
    },
    known: async (id) => void (await w.sessions.get(id)),
    store: {
      read: (id) => readContinueOption(w.cli, id),
      write: async (id, s) => {
        await writeContinueOption(w.cli, id, s);
        w.kept?.(id, s);
      },
    },
    panes,
    answers,
    now: w.now,
    log: w.log.child({ part: 'continue' }),
    inspect: w.inspect,
  });
  const resets = new LimitResets({
    subscribeEvery: (listener) => w.agents.states.subscribeEvery(listener),
    stopOf: (id) => w.agents.states.stopOf(id),
    continueOf: (id) => continues.of(id),
    now: w.now,
  });
  return {
    service,
    continues,
    plugin: async (app) => {
      await app.register(answersRoutes, { answers: service });
      await app.register(continueRoutes, { continues });
    },
    states: statesWithContinue(w.agents.states, continues),
    resets,
    stop: () => {
      resets.stop();
      continues.stop();
      service.stop();
    },
  };
}
