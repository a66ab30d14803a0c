/**
 * The REST surface of sessions (spec "Endpoints", decisions.md "HTTP"): create, list,
 * describe, delete, thumbnail, input, commands. Schemas (typebox) validate, type and
 * document each route; the work is done by a narrow `SessionsHandle` into the actor system.
 *
 * Invariant: every value from a client is data. Names are checked against the one pattern,
 * texts are bounded, and nothing here builds a tmux command: the handle's implementation does,
 * through the quoting layer.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { SlashCommand } from '../agent/builtin-commands.js';
import { ApiError } from '../errors.js';

/** Session names (decisions.md): the same pattern everywhere a name is accepted. */
export const SESSION_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
/** Longest description and project, in characters. */
export const MAX_DESCRIPTION_CHARS = 1024;
export const MAX_PROJECT_CHARS = 256;
/** Longest `keys` / `paste` text, in characters (the body limit caps it further). */
export const MAX_INPUT_CHARS = 1024 * 1024;
/** Longest key name. */
export const MAX_KEY_NAME_CHARS = 32;

export const AGENT_STATES = ['thinking', 'tool', 'idle', 'awaiting-input'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const SessionListItemSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  state: Type.Union([Type.Literal('running'), Type.Literal('exited')]),
  agentState: Nullable(Type.Union([Type.Literal('thinking'), Type.Literal('tool'), Type.Literal('idle'), Type.Literal('awaiting-input')])),
  lastOutputAt: Nullable(Type.String()),
  createdAt: Nullable(Type.String()),
  clients: Type.Integer({ minimum: 0 }),
  project: Nullable(Type.String()),
});
export type SessionListItem = Static<typeof SessionListItemSchema>;

const IdParams = Type.Object({ id: Type.String({ pattern: SESSION_NAME_PATTERN }) });

const CreateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ pattern: SESSION_NAME_PATTERN })),
    project: Type.Optional(Type.String({ maxLength: MAX_PROJECT_CHARS })),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object({ description: Type.String({ maxLength: MAX_DESCRIPTION_CHARS }) }, { additionalProperties: false });

export const InputMessageSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('key'), Type.Literal('keys'), Type.Literal('paste')]),
    name: Type.Optional(Type.String({ maxLength: MAX_KEY_NAME_CHARS })),
    data: Type.Optional(Type.String({ maxLength: MAX_INPUT_CHARS })),
  },
  { additionalProperties: false },
);

/** One input, as the client sends it over REST and WebSocket alike. */
export type InputMessage = { type: 'key'; name: string } | { type: 'keys'; data: string } | { type: 'paste'; data: string };

const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });
const CommandItem = Type.Object({ name: Type.String(), description: Type.String(), args: Type.Optional(Type.Unknown()) });

/** What the routes need from the actor system. Unknown sessions throw ApiError('session-not-found'). */
export interface SessionsHandle {
  list(): Promise<SessionListItem[]>;
  create(input: { name?: string; project?: string }): Promise<{ id: string; name: string }>;
  describe(id: string, description: string): Promise<void>;
  remove(id: string, keepBuffer: boolean): Promise<void>;
  thumbnail(id: string): Promise<string>;
  input(id: string, message: InputMessage): Promise<void>;
  commands(id: string): Promise<readonly SlashCommand[]>;
}

/** Checks the fields each input type needs; the schema only bounds them. */
export function toInputMessage(body: Static<typeof InputMessageSchema>): InputMessage {
  if (body.type === 'key') {
    if (body.name === undefined || body.data !== undefined)
      throw new ApiError('bad-request', 'body/name: a "key" input takes a key name in "name" and no "data"');
    return { type: 'key', name: body.name };
  }
  if (body.data === undefined || body.name !== undefined) {
    throw new ApiError('bad-request', `body/data: a "${body.type}" input takes its text in "data" and no "name"`);
  }
  return { type: body.type, data: body.data };
}

/** Refuses text that tmux cannot store (NUL) with a message naming the field. */
function refuseNul(field: string, value: string | undefined): void {
  if (value !== undefined && value.includes('\u0000')) throw new ApiError('bad-request', `${field}: must not contain NUL characters`);
}

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 503: ErrorBody };

export const sessionsRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsHandle }> = (app, { sessions }) => {
  app.get('/sessions', { schema: { response: { 200: Type.Array(SessionListItemSchema), ...errors } } }, async () => sessions.list());

  app.post(
    '/sessions',
    { schema: { body: Type.Optional(CreateBody), response: { 201: Type.Object({ id: Type.String(), name: Type.String() }), ...errors } } },
    async (req, reply) => {
      const body = req.body ?? {};
      refuseNul('body/project', body.project);
      const created = await sessions.create({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.project !== undefined ? { project: body.project } : {}),
      });
      return reply.code(201).send(created);
    },
  );

  app.patch(
    '/sessions/:id',
    {
      schema: {
        params: IdParams,
        body: PatchBody,
        response: { 200: Type.Object({ id: Type.String(), description: Type.String() }), ...errors },
      },
    },
    async (req) => {
      refuseNul('body/description', req.body.description);
      await sessions.describe(req.params.id, req.body.description);
      return { id: req.params.id, description: req.body.description };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      schema: {
        params: IdParams,
        querystring: Type.Object(
          { keepBuffer: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])), token: Type.Optional(Type.String()) },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (req, reply) => {
      await sessions.remove(req.params.id, req.query.keepBuffer === 'true');
      return reply.code(204).send(null);
    },
  );

  app.get('/sessions/:id/thumbnail', { schema: { params: IdParams, response: { 200: Type.String(), ...errors } } }, async (req, reply) => {
    const text = await sessions.thumbnail(req.params.id);
    return reply.type('text/plain; charset=utf-8').send(text);
  });

  app.post(
    '/sessions/:id/input',
    { schema: { params: IdParams, body: InputMessageSchema, response: { 204: Type.Null(), ...errors } } },
    async (req, reply) => {
      const message = toInputMessage(req.body);
      if (message.type === 'paste') refuseNul('body/data', message.data);
      await sessions.input(req.params.id, message);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/sessions/:id/commands',
    { schema: { params: IdParams, response: { 200: Type.Array(CommandItem), ...errors } } },
    async (req) => [...(await sessions.commands(req.params.id))],
  );
  return Promise.resolve();
};
