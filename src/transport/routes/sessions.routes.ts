/**
 * The REST surface of sessions (docs/api.md): create, list,
 * describe, delete, thumbnail, input, respawn, commands. Schemas (typebox) validate, type and
 * document each route; the work is done by a narrow `SessionsHandle` into the actor system.
 *
 * Invariant: every value from a client is data. Names are checked against the one pattern,
 * texts are bounded, and nothing here builds a tmux command: the handle's implementation does,
 * through the quoting layer.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SlashCommand } from '../../agent/contract/commands.js';
import { DomainError } from '../../errors.js';
import { parseInput, type InputMessage } from '../../protocol/input.js';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { SessionRouteSchemas } from '../schemas/session-routes.checks.js';
import type { SessionListItem } from '../schemas/session-routes.schemas.js';
import type { ContinueSchedule } from '../../protocol/continue.js';

export type { SessionListItem } from '../schemas/session-routes.schemas.js';

const { IdParams, ErrorBody, NoContent } = RouteSchemas;

/** A session as the sessions service gives it: the list's item but for its continue, which the continue service holds. */
export type SessionFacts = Omit<SessionListItem, 'continue'>;

/**
 * What the routes need from the sessions service (src/service/sessions/sessions.service.ts is one,
 * handed over as it is: a new route calls it, no forwarder in between). Unknown sessions throw
 * DomainError('session-not-found').
 */
export interface SessionsHandle {
  list(): Promise<SessionFacts[]>;
  /** One session, as the list gives it. */
  get(id: string): Promise<SessionFacts>;
  create(input: {
    name?: string;
    project?: string;
    cwd?: string;
    agent?: string;
    worktree?: { branch: string; from?: string };
  }): Promise<{ id: string; name: string }>;
  /** Sets the description (none given: changes nothing); answers the description in effect. */
  describe(id: string, description?: string): Promise<string>;
  /** `worktree: 'remove'` removes its worktree too (refused when that loses work, unless `force`). */
  remove(id: string, keepBuffer: boolean, opts?: { worktree?: 'keep' | 'remove'; force?: boolean }): Promise<void>;
  thumbnail(id: string): Promise<string>;
  input(id: string, message: InputMessage): Promise<void>;
  /** Starts an exited agent again; answers its state once the pane was seen again. */
  respawn(id: string): Promise<{ id: string; state: 'running' | 'exited'; exitStatus: number | null }>;
  commands(id: string): Promise<readonly SlashCommand[]>;
}

/** Refuses text that tmux cannot store (NUL) with a message naming the field. */
function refuseNul(field: string, value: string | undefined): void {
  if (value !== undefined && value.includes('\u0000')) throw new DomainError('invalid', `${field}: must not contain NUL characters`);
}

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 503: ErrorBody };

export interface SessionsRoutesOptions {
  readonly sessions: SessionsHandle;
  /** A session's continue (docs/api.md "Continue"), or null when none; absent: none anywhere. */
  readonly continueOf?: (id: string) => ContinueSchedule | null;
}

export const sessionsRoutes: FastifyPluginAsyncTypebox<SessionsRoutesOptions> = (app, { sessions, continueOf }) => {
  const item = (facts: SessionFacts): SessionListItem => ({ ...facts, continue: continueOf?.(facts.id) ?? null });
  app.get('/sessions', { schema: { response: { 200: SessionRouteSchemas.SessionList, ...errors } } }, async () =>
    (await sessions.list()).map(item),
  );

  app.get('/sessions/:id', { schema: { params: IdParams, response: { 200: SessionRouteSchemas.SessionItem, ...errors } } }, async (req) =>
    item(await sessions.get(req.params.id)),
  );

  app.post(
    '/sessions',
    { schema: { body: SessionRouteSchemas.CreateSessionBody, response: { 201: SessionRouteSchemas.CreatedSession, ...errors } } },
    async (req, reply) => {
      const body = req.body ?? {};
      refuseNul('body/project', body.project);
      const created = await sessions.create({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.project !== undefined ? { project: body.project } : {}),
        ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
        ...(body.agent !== undefined ? { agent: body.agent } : {}),
        ...(body.worktree !== undefined ? { worktree: body.worktree } : {}),
      });
      return reply.code(201).send(created);
    },
  );

  app.patch(
    '/sessions/:id',
    {
      schema: {
        params: IdParams,
        body: SessionRouteSchemas.DescribeSessionBody,
        response: { 200: SessionRouteSchemas.DescribedSession, ...errors },
      },
    },
    async (req) => {
      refuseNul('body/description', req.body.description);
      const description = await sessions.describe(req.params.id, req.body.description);
      return { id: req.params.id, description };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      schema: {
        params: IdParams,
        querystring: SessionRouteSchemas.DeleteSessionQuery,
        response: { 204: NoContent, ...errors },
      },
    },
    async (req, reply) => {
      const { worktree, force } = req.query;
      if (force !== undefined && worktree !== 'remove')
        throw new DomainError('invalid', 'force applies to worktree=remove only', { field: 'querystring/force' });
      await sessions.remove(req.params.id, req.query.keepBuffer === 'true', { ...(worktree ? { worktree } : {}), force: force === 'true' });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/sessions/:id/thumbnail',
    { schema: { params: IdParams, response: { 200: SessionRouteSchemas.Thumbnail, ...errors } } },
    async (req, reply) => {
      const text = await sessions.thumbnail(req.params.id);
      return reply.type('text/plain; charset=utf-8').send(text);
    },
  );

  app.post(
    '/sessions/:id/input',
    { schema: { params: IdParams, body: SessionRouteSchemas.InputBody, response: { 204: NoContent, ...errors } } },
    async (req, reply) => {
      // A refusal names its field (`data`), which the error body spells `body/data`.
      const message = parseInput(req.body);
      if (message.type === 'paste') refuseNul('body/data', message.data);
      await sessions.input(req.params.id, message);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/sessions/:id/respawn',
    {
      schema: {
        params: IdParams,
        response: {
          200: SessionRouteSchemas.RespawnAnswer,
          ...errors,
        },
      },
    },
    async (req) => {
      // No body, or an empty object: there is nothing to choose (the agent starts as it was created).
      const body: unknown = req.body;
      if (body !== undefined && body !== null) {
        if (typeof body !== 'object' || Array.isArray(body)) throw new DomainError('invalid', 'body: must be an empty object or absent');
        const field = Object.keys(body)[0];
        if (field !== undefined) throw new DomainError('invalid', `body/${field}: unknown field (a respawn takes no fields)`);
      }
      return sessions.respawn(req.params.id);
    },
  );

  app.get(
    '/sessions/:id/commands',
    { schema: { params: IdParams, response: { 200: SessionRouteSchemas.CommandList, ...errors } } },
    async (req) => [...(await sessions.commands(req.params.id))],
  );
  return Promise.resolve();
};
