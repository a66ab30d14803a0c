/**
 * A session record (records.ts) as a TypeBox schema: the source of its type and of the
 * generated check (records.checks.ts, `npm run schemas`). The running code imports only
 * types from here.
 */
import { StoredPrompts } from '../protocol/prompt.schemas.js';
import { Type, type Static } from 'typebox';
import { CONVERSATION_ID_PATTERN } from '../agent/wire/hook-wire.js';
import { AGENT_NAME_PATTERN } from '../config/schema.js';
import { SessionWorktree } from '../protocol/worktree.schemas.js';

export const SessionRecordSchema = Type.Object(
  {
    v: Type.Literal(1),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    description: Type.String({ maxLength: 4096 }),
    /** The directory the agent started in; null when tether did not record it. */
    cwd: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    /** The agent's argv as it was launched (for the record; a restore launches the agent configured now). */
    command: Type.Array(Type.String()),
    /** The file pi keeps the conversation in, as the extension last reported it. */
    sessionFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    /** The configured agent the session runs (`default` is `[agent]`); absent in records from before it was kept. */
    agent: Type.Optional(Type.String({ pattern: AGENT_NAME_PATTERN })),
    /** Another agent's conversation id (what its own resume option takes), as it last reported it. */
    conversation: Type.Optional(Type.Union([Type.String({ pattern: CONVERSATION_ID_PATTERN }), Type.Null()])),
    /**
     * The git worktree tether made the session in (its repository, branch, folder, the commit it
     * started from, and whether tether made the branch); absent in records from before it was kept.
     */
    worktree: Type.Optional(Type.Union([Type.Null(), SessionWorktree])),
    /**
     * The session's scheduled continue as its tmux option held it (docs/api.md "Continue"), set
     * again on the session a restore makes; absent when none was scheduled.
     */
    continue: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 16384 })])),
    /**
     * The session's prompts as its tmux option held them (docs/api.md "Prompts"): read back when a
     * restore made the session again (its tmux server, and the option, were lost).
     */
    prompts: Type.Optional(Type.Union([Type.Null(), StoredPrompts])),
    createdAt: Type.String(),
    /** The highest stream position reserved so far. */
    reservedSeq: Type.Integer({ minimum: 0 }),
    /**
     * The tmux server the session lived in (its pid and start time, epoch seconds): a session
     * missing from that same server was killed there on purpose; from another server, or with
     * none running, it was lost with its server.
     */
    server: Type.Union([Type.Null(), Type.Object({ pid: Type.Integer({ minimum: 1 }), startTime: Type.Integer({ minimum: 0 }) })]),
    /**
     * Why the session is not to be brought back: its agent exited by itself, or a restore could
     * not be made (its directory gone, its agent missing), with the reason. null: restore it.
     */
    ended: Type.Union([
      Type.Null(),
      Type.Object({ reason: Type.Union([Type.Literal('exited'), Type.Literal('unrestorable')]), detail: Type.String(), at: Type.String() }),
    ]),
    /**
     * The reasons the user was told (pushed) that the session could not be restored, since it
     * last ran: a failure for one of them is not told again (docs/push.md). Absent once it runs.
     */
    told: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
  },
  { additionalProperties: false },
);
export type SessionRecord = Static<typeof SessionRecordSchema>;
