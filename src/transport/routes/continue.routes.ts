/**
 * Continue when it resets (docs/api.md "Continue"): `POST /sessions/:id/continue` schedules the
 * text to be typed once when the agent's usage limit resets (`at: "reset"`) or at a time;
 * `DELETE` cancels the one that waits. Behind the token, like every route; the schedule is the
 * token's device's (`by`), and so is the answer it types.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ContinueSchedule } from '../../protocol/continue.js';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { AnswerRouteSchemas } from '../schemas/answer-routes.checks.js';

/** What the continue routes need (src/service/continue/continue.service.ts is one). */
export interface ContinueHandle {
  schedule(id: string, body: { at: string; text?: string }, by: string): Promise<ContinueSchedule>;
  cancel(id: string): Promise<ContinueSchedule>;
}

const { ErrorBody, IdParams } = RouteSchemas;
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 503: ErrorBody };

export const continueRoutes: FastifyPluginAsyncTypebox<{ continues: ContinueHandle }> = (app, { continues }) => {
  app.post(
    '/sessions/:id/continue',
    {
      schema: {
        params: IdParams,
        body: AnswerRouteSchemas.ContinueBody,
        response: { 201: AnswerRouteSchemas.ContinueReply, ...errors },
      },
    },
    async (req, reply) => {
      const by = req.tetherToken?.name ?? 'unknown';
      const { at, text } = req.body;
      return reply.code(201).send(await continues.schedule(req.params.id, { at, ...(text !== undefined ? { text } : {}) }, by));
    },
  );
  app.delete(
    '/sessions/:id/continue',
    { schema: { params: IdParams, response: { 200: AnswerRouteSchemas.ContinueReply, ...errors } } },
    async (req) => continues.cancel(req.params.id),
  );
  return Promise.resolve();
};
