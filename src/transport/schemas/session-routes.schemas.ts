/**
 * The schemas of a session's own routes (docs/api.md "Sessions": the list, create, describe,
 * delete, input, respawn, commands; changes and diff are in changes-routes.schemas.ts, the answer
 * to an ask and the continue in answer-routes.schemas.ts), as
 * TypeBox schemas: the source of
 * their types and of the generated checks (session-routes.checks.ts, `npm run schemas`). The
 * routes' shared pieces (`IdParams`, `ErrorBody`, `NoContent`) are in routes.schemas.ts.
 */
import { Type, type Static } from 'typebox';
import { ContinueSchedule } from '../../protocol/continue.schemas.js';
import { AgentStateValue, Ask, Stop } from '../../protocol/frames.schemas.js';
import { WorktreeFacts } from '../../protocol/worktree.schemas.js';
import { AgentUsage } from '../../protocol/usage.schemas.js';
import { SESSION_NAME_PATTERN } from '../../protocol/session-name.js';
import { MAX_BRANCH_CHARS } from '../../git/repository.js';

/** Longest directory path, in characters (Linux's PATH_MAX). */
const MAX_CWD_CHARS = 4096;
/** Longest ref a new worktree's branch may start from. */
const MAX_REF_CHARS = 1024;
/** Longest description and project, in characters. */
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_PROJECT_CHARS = 256;

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const ChangesSummary = Type.Object(
  { files: Type.Integer({ minimum: 0 }), added: Type.Integer({ minimum: 0 }), removed: Type.Integer({ minimum: 0 }) },
  { description: 'files changed and lines added and removed against the base, as last computed' },
);

const SessionListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  state: Type.Union([Type.Literal('running'), Type.Literal('exited'), Type.Literal('restoring'), Type.Literal('unrestorable')]),
  exitStatus: Nullable(Type.Integer({ description: "the exited agent's exit status, when known" })),
  agentState: Nullable(AgentStateValue),
  lastOutputAt: Nullable(Type.String()),
  createdAt: Nullable(Type.String()),
  clients: Type.Integer({ minimum: 0 }),
  project: Nullable(Type.String()),
  cwd: Nullable(Type.String({ description: 'the directory the agent started in' })),
  agent: Type.String({ description: 'the configured agent it runs: "default" for [agent], else the name of its [agents.<name>]' }),
  ask: Nullable(Ask),
  stop: Nullable(Stop),
  usage: Nullable(AgentUsage),
  reason: Type.Optional(Type.String({ description: 'why an unrestorable session could not be brought back' })),
  worktree: Nullable(WorktreeFacts),
  changes: Nullable(ChangesSummary),
  continue: Nullable(ContinueSchedule),
});
export type SessionListItem = Static<typeof SessionListItem>;

const CreateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ pattern: SESSION_NAME_PATTERN })),
    project: Type.Optional(Type.String({ maxLength: MAX_PROJECT_CHARS })),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_CWD_CHARS, description: 'absolute path of an existing directory' })),
    agent: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'a configured agent: "default" ([agent]) or an [agents.<name>]' }),
    ),
    worktree: Type.Optional(
      Type.Object(
        {
          branch: Type.String({ minLength: 1, maxLength: MAX_BRANCH_CHARS, description: 'a new branch, or one checked out nowhere else' }),
          from: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REF_CHARS, description: 'where a new branch starts (HEAD)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const CommandItem = Type.Object({ name: Type.String(), description: Type.String(), args: Type.Optional(Type.Unknown()) });

export const SessionRouteSchemas = {
  SessionList: Type.Array(SessionListItem),
  SessionItem: SessionListItem,
  CreateSessionBody: Type.Optional(CreateBody),
  CreatedSession: Type.Object({ id: Type.String(), name: Type.String() }),
  DescribeSessionBody: Type.Object(
    { description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_CHARS })) },
    { additionalProperties: false },
  ),
  DescribedSession: Type.Object({ id: Type.String(), description: Type.String() }),
  DeleteSessionQuery: Type.Object(
    {
      keepBuffer: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
      worktree: Type.Optional(Type.Union([Type.Literal('keep'), Type.Literal('remove')])),
      force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
      token: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  Thumbnail: Type.String(),
  /**
   * The input body: a `type` the route knows, the rest checked by the one input schema
   * (protocol/input.ts), so REST and the stream refuse the same things with the same words.
   */
  InputBody: Type.Object({ type: Type.String({ maxLength: 16 }) }, { additionalProperties: true }),
  RespawnAnswer: Type.Object({
    id: Type.String(),
    state: Type.Union([Type.Literal('running'), Type.Literal('exited')]),
    exitStatus: Nullable(Type.Integer()),
  }),
  CommandList: Type.Array(CommandItem),
};
