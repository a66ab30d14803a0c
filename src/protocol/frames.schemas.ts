/**
 * The stream's JSON frames as TypeBox schemas (docs/api.md "WebSocket"): the source of their
 * types and of the generated checks (frames.checks.ts, `npm run schemas`). The running code
 * imports only types from here, so TypeBox is not loaded with it (docs/architecture.md
 * "Schemas and their checks").
 */
import { Type, type Static } from 'typebox';
import { FRAME_ERRORS } from '../errors.js';
import { ASK_KINDS, CHOICE_ID_PATTERN, MAX_ASK_ID_CHARS } from './ask.js';
import { ContinueSchedule } from './continue.schemas.js';
import { InputSchemas } from './input.schemas.js';
import { MAX_STOP_MESSAGE_CHARS, STOP_KINDS, type Stop as StopShape } from './stop.js';
import { MAX_PROMPT_CHARS, PROMPT_ID_PATTERN } from './prompt.js';
import { PromptRecord } from './prompt.schemas.js';
import type { Holds, Same } from './same-type.js';
import { AgentUsage } from './usage.schemas.js';
import { WorktreeFacts } from './worktree.schemas.js';
import { AGENT_STATE_VALUES, type AgentStateValue as AgentStateName } from '../machines/agent-state.machine.js';

/** The agent states of the side channel (the agent-state machine's values). */
export const AgentStateValue = Type.Enum(AGENT_STATE_VALUES);
export type AgentState = AgentStateName;

/** What an agent asks while it waits (docs/api.md "Asks"). */
export const Ask = Type.Object({
  id: Type.String({ description: 'never reused' }),
  kind: Type.Enum(ASK_KINDS),
  agent: Type.String({ description: "the agent's kind" }),
  tool: Type.Optional(Type.String()),
  concern: Type.String({ description: 'the command, path, URL or question, cut to 500 characters' }),
  detail: Type.Optional(Type.String()),
  choices: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  askedAt: Type.String(),
});
export type Ask = Static<typeof Ask>;

/** Why an agent stopped (docs/api.md "Stops"): beside its state, like an ask. */
export const Stop = Type.Object({
  id: Type.String({ description: 'never reused; a second report of the same stop keeps it' }),
  kind: Type.Enum(STOP_KINDS),
  agent: Type.String({ description: "the agent's kind" }),
  message: Type.String({ description: `the agent's own words, cut to ${MAX_STOP_MESSAGE_CHARS} characters` }),
  stoppedAt: Type.String({ description: 'ISO 8601' }),
  resetsAt: Type.Optional(Type.String({ description: "a usage limit's reset, ISO 8601, when the agent says" })),
  limit: Type.Optional(Type.String({ description: 'which limit (five_hour, seven_day, ...), when the agent says' })),
  exitCode: Type.Optional(Type.Integer({ description: 'an exited agent: its exit code, when it exited by itself' })),
  signal: Type.Optional(Type.String({ description: 'an exited agent: the signal that ended it (SIGKILL), when one did' })),
});
/** A stop's one type: stop.ts's `Stop`. */
export type Stop = StopShape;
/**
 * The schema's type is that `Stop`, field for field: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type StopSchemaIsTheType = Holds<Same<Static<typeof Stop>, StopShape>>;

/** A prompt of the session changed (docs/api.md "Prompts"): to every client of the session. */
export const PromptFrame = Type.Object({ type: Type.Literal('prompt'), prompt: PromptRecord });

export const StateFrame = Type.Object({
  type: Type.Literal('state'),
  value: AgentStateValue,
  tool: Type.Optional(Type.String()),
  ts: Type.Number(),
  /** What the agent asks while it waits (with `awaiting-input`); absent when it asks nothing. */
  ask: Type.Optional(Ask),
  /** Why the agent stopped, while it is stopped (from the stop until it starts a new turn). */
  stop: Type.Optional(Stop),
  /** The session's continue while it waits, and its outcome once, when decided (docs/api.md "Continue"). */
  continue: Type.Optional(ContinueSchedule),
  /** The agent's account usage windows, once it reported them (docs/api.md "Usage"). */
  usage: Type.Optional(AgentUsage),
});
/** How an answer sent on the stream went (docs/api.md "Asks"). */
export const AnsweredFrame = Type.Object({
  type: Type.Literal('answered'),
  ask: Type.String(),
  choice: Type.String(),
  landed: Type.Boolean(),
});
export const SnapshotFrame = Type.Object({ type: Type.Literal('snapshot'), seq: Type.Integer({ minimum: 0 }), data: Type.String() });
export const SessionMetaFrame = Type.Object({
  type: Type.Literal('session-meta'),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  createdAt: Type.String(),
  /** The configured agent the session runs (`default` for `[agent]`); optional for servers before it. */
  agent: Type.Optional(Type.String()),
  /** `exited` while the agent is not running (its pane kept by tmux); optional for servers before it. */
  state: Type.Optional(Type.Union([Type.Literal('running'), Type.Literal('exited')])),
  exitStatus: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The git worktree tether made the session in, or null; optional for servers before it. */
  worktree: Type.Optional(Type.Union([WorktreeFacts, Type.Null()])),
});
export const ErrorFrame = Type.Object({ type: Type.Literal('error'), code: Type.Enum(FRAME_ERRORS), message: Type.String() });
export type StateFrame = Static<typeof StateFrame>;
/** An agent state as a `state` frame carries it: what the agent hub reports and the streams send. */
export type AgentStateFact = Readonly<Omit<StateFrame, 'type'>>;
export type SnapshotFrame = Static<typeof SnapshotFrame>;
export type SessionMetaFrame = Static<typeof SessionMetaFrame>;
export type ErrorFrame = Static<typeof ErrorFrame>;
export type AnsweredFrame = Static<typeof AnsweredFrame>;
export type PromptFrame = Static<typeof PromptFrame>;
export type ServerFrame = StateFrame | SnapshotFrame | SessionMetaFrame | ErrorFrame | AnsweredFrame | PromptFrame;

/** The frames a client sends, by type. */
export const ClientFrames = {
  resume: Type.Object(
    { type: Type.Literal('resume'), lastSeq: Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()]) },
    { additionalProperties: false },
  ),
  // The three inputs are the one input schema (protocol/input.ts), the same as over REST.
  ...InputSchemas,
  'snapshot-request': Type.Object({ type: Type.Literal('snapshot-request') }, { additionalProperties: false }),
  respawn: Type.Object({ type: Type.Literal('respawn') }, { additionalProperties: false }),
  answer: Type.Object(
    {
      type: Type.Literal('answer'),
      ask: Type.String({ minLength: 1, maxLength: MAX_ASK_ID_CHARS }),
      choice: Type.String({ pattern: CHOICE_ID_PATTERN }),
    },
    { additionalProperties: false },
  ),
  prompt: Type.Object(
    {
      type: Type.Literal('prompt'),
      text: Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS }),
      id: Type.Optional(Type.String({ pattern: PROMPT_ID_PATTERN })),
    },
    { additionalProperties: false },
  ),
};
export const ClientFrameSchema = Type.Union([
  ClientFrames.resume,
  ClientFrames.key,
  ClientFrames.keys,
  ClientFrames.paste,
  ClientFrames['snapshot-request'],
  ClientFrames.respawn,
  ClientFrames.answer,
  ClientFrames.prompt,
]);
export type ClientFrame = Static<typeof ClientFrameSchema>;
export type ClientType = keyof typeof ClientFrames;
