/**
 * Prompts (docs/api.md "Prompts"): `POST /sessions/:id/prompt` queues a prompt to be submitted to
 * the session's agent exactly once (202, or 200 with the prompt its id named already),
 * `GET /sessions/:id/prompts` lists them, `DELETE /sessions/:id/prompts/:promptId` cancels a
 * queued one. Behind the token, like every route; a prompt is the token's device's (`by`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PromptRecord } from '../../protocol/prompt.js';
import { PromptRouteSchemas } from '../schemas/prompt-routes.checks.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

/** What the prompt routes need (src/service/prompts/prompts.service.ts is one). */
export interface PromptsHandle {
  submit(id: string, request: { text: string; id?: string }, by: string): Promise<{ record: PromptRecord; created: boolean }>;
  list(id: string): Promise<PromptRecord[]>;
  cancel(id: string, promptId: string): Promise<PromptRecord>;
}

const { ErrorBody, IdParams } = RouteSchemas;
const { PromptBody, PromptReply, PromptList, PromptParams } = PromptRouteSchemas;
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 503: ErrorBody };

export const promptsRoutes: FastifyPluginAsyncTypebox<{ prompts: PromptsHandle }> = (app, { prompts }) => {
  app.post(
    '/sessions/:id/prompt',
    { schema: { params: IdParams, body: PromptBody, response: { 200: PromptReply, 202: PromptReply, ...errors } } },
    async (req, reply) => {
      const by = req.tetherToken?.name ?? 'unknown';
      const { text, id } = req.body;
      const { record, created } = await prompts.submit(req.params.id, { text, ...(id !== undefined ? { id } : {}) }, by);
      return reply.code(created ? 202 : 200).send(record);
    },
  );
  app.get('/sessions/:id/prompts', { schema: { params: IdParams, response: { 200: PromptList, ...errors } } }, async (req) =>
    prompts.list(req.params.id),
  );
  app.delete(
    '/sessions/:id/prompts/:promptId',
    { schema: { params: PromptParams, response: { 200: PromptReply, ...errors } } },
    async (req) => prompts.cancel(req.params.id, req.params.promptId),
  );
  return Promise.resolve();
};
