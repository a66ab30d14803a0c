/**
 * Answers to what agents ask (docs/api.md "Asks"): `POST /sessions/:id/answer` types the chosen
 * answer into the pane as a person would and says whether the agent took it; `GET /ops/answers`
 * is the answer log's last entries (for `tether status` and the `/ops` page). Behind the token,
 * like every route; the answer is recorded under the name of the token that gave it.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { AnswerRouteSchemas } from '../schemas/answer-routes.checks.js';

/** What the answer routes need (src/service/answers/answers.service.ts is one). */
export interface AnswersHandle {
  answer(
    id: string,
    ask: string,
    choice: string,
    by: { by: string; tokenId: string | null },
  ): Promise<{ ask: string; choice: string; landed: boolean; by: string }>;
  /** The last answers, newest last. */
  last(): Promise<readonly unknown[]>;
}

const { ErrorBody, IdParams } = RouteSchemas;
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: AnswerRouteSchemas.AnswerRefusal, 413: ErrorBody, 503: ErrorBody };

export const answersRoutes: FastifyPluginAsyncTypebox<{ answers: AnswersHandle }> = (app, { answers }) => {
  app.post(
    '/sessions/:id/answer',
    { schema: { params: IdParams, body: AnswerRouteSchemas.AnswerBody, response: { 200: AnswerRouteSchemas.AnswerReply, ...errors } } },
    async (req) => {
      const token = req.tetherToken;
      return answers.answer(req.params.id, req.body.ask, req.body.choice, { by: token?.name ?? 'unknown', tokenId: token?.id ?? null });
    },
  );
  app.get('/ops/answers', async () => ({ answers: await answers.last() }));
  return Promise.resolve();
};
