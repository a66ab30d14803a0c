/**
 * Answers in the daemon (docs/api.md "Asks"): the answer service over the agent hub's asks and
 * the sessions' panes, and the answer log in the data dir. Part of the composition root.
 */
import type { FastifyInstance } from 'fastify';
import type { SidecarSystem } from '../actors/system.js';
import type { AgentHub } from '../agent/hub.js';
import type { Logger } from '../log.js';
import { AnswerLog, answerLogPath } from '../service/answer-log.js';
import { AnswersService } from '../service/answers.service.js';
import type { SessionsService } from '../service/sessions.service.js';
import { answersRoutes } from '../transport/answers.routes.js';

export interface AnswersWiring {
  readonly hub: AgentHub;
  readonly system: SidecarSystem;
  readonly sessions: Pick<SessionsService, 'input'>;
  readonly dataDir: string;
  readonly now: () => number;
  readonly log: Logger;
}

/** The answer service of one daemon run, and the plugin of its routes (`GET /ops/answers`). */
export function startAnswers(w: AnswersWiring): { service: AnswersService; plugin: (app: FastifyInstance) => Promise<void> } {
  const service = new AnswersService({
    hub: w.hub,
    panes: {
      input: (id, message) => w.sessions.input(id, message),
      activity: (id) => w.system.session(id)?.activity() ?? null,
    },
    answers: new AnswerLog(answerLogPath(w.dataDir), w.log),
    now: w.now,
    log: w.log.child({ part: 'answers' }),
  });
  return { service, plugin: async (app) => void (await app.register(answersRoutes, { answers: service })) };
}
