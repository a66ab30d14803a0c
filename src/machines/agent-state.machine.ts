/**
 * Agent state (docs/contract.md "Agent state", with the mapping of
 * docs/agents.md "Agent state"): what the agent in one session is doing, as the side channel
 * reports it. One actor per session, fed by the events the tether extension reports.
 *
 * States: `absent` (no agent reported: `agentState` null, no state frames) and `reporting`
 * with the four contract values `idle`, `thinking`, `tool`, `awaiting-input`. `awaiting-input`
 * is `waiting` (for a prompt) or `asked` (the agent put a question on screen: an ask, whose id and
 * tool the context holds; docs/contract.md "Agent state", docs/api.md "Asks").
 *
 * Why the agent stopped is a stop (docs/contract.md "Stops"; its words and times live beside it,
 * in the hub): `done` (the turn ended: awaiting-input `waiting`), `usage-limit` or `error`
 * (awaiting-input `stopped`: the agent gave up on its model API and waits), `exited` (the
 * top-level `exited`: its process ended, no agent reports).
 *
 * Invariants: the machine is pure (no clock: every event carries its `ts`, epoch ms, from the
 * hub; every stop's id comes in on its event); `awaiting-input` is entered by an `agent.end` whose
 * agent context reported idle with nothing pending, by an ask, or by a stop; an ask is held only
 * in `asked` (leaving it clears it), and only an answer or an end naming its id moves it; a stop
 * is held only in `waiting`, `stopped` and `exited` (leaving them clears it: a new turn, a new
 * agent); `tool` holds while any tool call is still running.
 */
import { assign, setup } from 'xstate';

/** The four values a `state` frame carries: the one list (protocol/frames.ts builds its schema from it). */
export const AGENT_STATE_VALUES = ['idle', 'thinking', 'tool', 'awaiting-input'] as const;
export type AgentStateValue = (typeof AGENT_STATE_VALUES)[number];

/** A running tool call. */
export interface RunningTool {
  readonly id: string;
  readonly name: string;
}

/**
 * What a landed answer does to the agent's state: `run` (the tool it asked for runs: `tool`),
 * `wait` (it stops and waits for the person: `awaiting-input`), `resume` (it goes on: `thinking`).
 */
export type AnswerEffect = 'run' | 'wait' | 'resume';

/**
 * The kinds of stop: the one list (protocol/stop.ts carries it to the wire; what each means to
 * push, the card and continue is protocol/stop-meanings.ts's table).
 */
export const STOP_KINDS = ['done', 'usage-limit', 'error', 'exited'] as const;
export type StopKind = (typeof STOP_KINDS)[number];

/** Why the agent stopped: the stop's id (never reused) and kind; the hub keeps the rest. */
export interface HeldStop {
  readonly id: string;
  readonly kind: StopKind;
}

/** The ask the agent waits on: its id (never reused) and the tool it asks for. */
export interface PendingAsk {
  readonly id: string;
  readonly tool: string | null;
}

export interface AgentStateContext {
  /** Tool calls started and not yet ended, oldest first. */
  tools: RunningTool[];
  /** When the current value was entered (epoch ms), from the event that entered it. */
  ts: number;
  /** The ask the agent waits on (only in `awaiting-input.asked`), or null. */
  ask: PendingAsk | null;
  /** Why the agent stopped (only in `waiting`, `stopped` and `exited`), or null. */
  stop: HeldStop | null;
}

export type AgentStateEvent =
  /** An agent connected (or reconnected) and says what it is doing. */
  | { type: 'agent.hello'; value: AgentStateValue; tool?: string; ts: number }
  /** The agent is ready for a prompt: started, or a new/resumed/forked/reloaded session. */
  | { type: 'agent.ready'; ts: number }
  | { type: 'agent.start'; ts: number }
  | { type: 'tool.start'; id: string; tool: string; ts: number }
  | { type: 'tool.end'; id: string; ts: number }
  /** `idle`: the agent context reported idle with nothing pending (decided by the extension); `stop`: the id of its `done` stop. */
  | { type: 'agent.end'; idle: boolean; stop?: string; ts: number }
  /** The agent stopped on a usage limit or an API error it gave up on, or its process ended (`exited`): `id` is the stop's. */
  | { type: 'agent.stop'; id: string; kind: Exclude<StopKind, 'done'>; ts: number }
  | { type: 'session.tree'; ts: number }
  /** The agent asks something and waits (a permission, a question): `id` is the ask's. */
  | { type: 'ask.open'; id: string; tool?: string; ts: number }
  /** An answer to ask `id` landed (tether typed it and saw the agent take it). */
  | { type: 'ask.answered'; id: string; effect: AnswerEffect; ts: number }
  /** Ask `id` is over without an answer of tether's (answered at the terminal, or the agent moved on). */
  | { type: 'ask.ended'; id: string; ts: number }
  | { type: 'session.compact'; ts: number }
  /** The agent's connection closed (pi quit, was killed, or its extension went away). */
  | { type: 'agent.gone'; ts: number };

/** `agent.hello` lands in the state the agent says it is in (tether's own: reconnects). */
function helloTargets(prefix: string) {
  return AGENT_STATE_VALUES.map((value) => ({
    target: `${prefix}${value}`,
    guard: { type: 'isHelloFor' as const, params: { value } },
    actions: 'syncFromHello' as const,
    description: `An agent (re)connected while ${value}`,
    meta: { row: 'tether' },
  }));
}

/** A row to `target`, entered at the event's time with no tool running (`row`: the table's, or tether's own). */
function fresh(target: string, description: string, row: string | readonly string[] = 'tether') {
  return { target, actions: ['stamp', 'clearTools'] as const, description, meta: { row } };
}

/** A row into (or staying in) `tool`, as of the event's time, its running calls updated by `action`. */
function toTool<const A extends 'addTool' | 'removeTool' | 'runAskedTool'>(
  action: A,
  description: string,
  row: string | readonly string[] = 'tether',
) {
  return { target: '#agentState.reporting.tool', actions: ['stamp', action] as const, description, meta: { row } };
}

/** An answer to the pending ask landed, and its choice has this effect. */
const isAnswerWith =
  (effect: AnswerEffect) =>
  ({ context, event }: { context: AgentStateContext; event: AgentStateEvent }): boolean =>
    event.type === 'ask.answered' && event.id === context.ask?.id && event.effect === effect;

/** The agent's process ended: exited, with the stop and no tool running (`row`: the table's, or tether's own). */
function toExited(description: string, row: string | readonly string[]) {
  return {
    target: '#agentState.exited',
    guard: 'isExitStop' as const,
    actions: ['stamp', 'clearTools', 'holdStop'] as const,
    description,
    meta: { row },
  };
}

export const agentStateMachine = setup({
  types: {
    context: {} as AgentStateContext,
    events: {} as AgentStateEvent,
  },
  actions: {
    /** The current value was entered now (the event's time). */
    stamp: assign({ ts: ({ event }) => event.ts }),
    clearTools: assign({ tools: [] }),
    addTool: assign({
      tools: ({ context, event }) =>
        event.type === 'tool.start'
          ? [...context.tools.filter((t) => t.id !== event.id), { id: event.id, name: event.tool }]
          : context.tools,
    }),
    removeTool: assign({
      tools: ({ context, event }) => (event.type === 'tool.end' ? context.tools.filter((t) => t.id !== event.id) : context.tools),
    }),
    holdAsk: assign({
      ask: ({ event }) => (event.type === 'ask.open' ? { id: event.id, tool: event.tool ?? null } : null),
    }),
    clearAsk: assign({ ask: null }),
    /** The turn ended: no tool runs, and its `done` stop is held (when the end names one). */
    endTurn: assign({
      tools: [],
      stop: ({ event }) => (event.type === 'agent.end' && event.stop !== undefined ? { id: event.stop, kind: 'done' as const } : null),
    }),
    holdStop: assign({
      stop: ({ event }) => (event.type === 'agent.stop' ? { id: event.id, kind: event.kind } : null),
    }),
    clearStop: assign({ stop: null }),
    /** The asked tool runs: it is the running call (the one the agent started before it asked, or the ask's). */
    runAskedTool: assign({
      tools: ({ context }) =>
        context.tools.length > 0 || context.ask === null
          ? context.tools
          : [{ id: `ask:${context.ask.id}`, name: context.ask.tool ?? 'tool' }],
    }),
    syncFromHello: assign({
      ts: ({ event }) => event.ts,
      tools: ({ event }) => (event.type === 'agent.hello' && event.value === 'tool' ? [{ id: 'hello', name: event.tool ?? 'tool' }] : []),
    }),
  },
  guards: {
    /** The agent says it is in this state (`agent.hello`). */
    isHelloFor: ({ event }, params: { value: AgentStateValue }) => event.type === 'agent.hello' && event.value === params.value,
    /** The agent context reported idle with nothing pending (the table's condition). */
    isAgentIdle: ({ event }) => event.type === 'agent.end' && event.idle,
    /** An answer to the pending ask that runs the tool it asked for. */
    isRunAnswer: isAnswerWith('run'),
    /** An answer to the pending ask after which the agent waits for the person. */
    isWaitAnswer: isAnswerWith('wait'),
    /** An answer to the pending ask after which the agent goes on by itself. */
    isResumeAnswer: isAnswerWith('resume'),
    /** The pending ask ended without an answer of tether's. */
    isPendingAsk: ({ context, event }) => event.type === 'ask.ended' && event.id === context.ask?.id,
    /** The agent gave up on its model API (a usage limit, an error): it still runs and waits. */
    isApiStop: ({ event }) => event.type === 'agent.stop' && event.kind !== 'exited',
    /** The agent's process ended. */
    isExitStop: ({ event }) => event.type === 'agent.stop' && event.kind === 'exited',
    /** Another tool call is still running after this one ended. */
    hasOtherToolsRunning: ({ context, event }) => event.type === 'tool.end' && context.tools.some((t) => t.id !== event.id),
  },
}).createMachine({
  id: 'agentState',
  description:
    'docs/contract.md "Agent state": thinking, tool, idle, awaiting-input, moved by the agent\'s events (docs/agents.md mapping)',
  context: { tools: [], ts: 0, ask: null, stop: null },
  initial: 'absent',
  states: {
    absent: {
      description: 'No agent reported from this session (agentState null; no state frames)',
      on: {
        'agent.hello': helloTargets('#agentState.reporting.'),
        'agent.stop': toExited("The agent's process ended after its reports stopped (its connection closed first): exited, with the stop", [
          'absent --the agent stops [its process ended]--> exited',
        ]),
      },
    },
    exited: {
      description: "The agent's process ended (the stop says how: its exit code or signal); no agent reports (agentState null)",
      exit: 'clearStop',
      on: {
        'agent.hello': helloTargets('#agentState.reporting.'),
        'agent.stop': toExited('Another agent process ended (a respawned one): exited, with its stop', 'tether'),
      },
    },
    reporting: {
      description: 'An agent with the tether extension is connected and reports its events',
      initial: 'idle',
      on: {
        'agent.end': [
          {
            target: '.awaiting-input',
            guard: 'isAgentIdle',
            actions: ['stamp', 'endTurn'],
            description: 'agent_end, and the agent context reports idle with nothing pending',
            meta: { row: ['any --agent_end event [the agent context reports idle]--> awaiting-input'] },
          },
          {
            description: 'agent_end while the agent is not idle (a retry, compaction or queued message follows): no change',
            meta: { row: 'tether' },
          },
        ],
        'agent.start': fresh('.thinking', 'docs/agents.md: agent_start -> thinking'),
        'tool.start': toTool('addTool', 'docs/agents.md: tool_execution_start -> tool (with the tool name)'),
        'tool.end': [
          {
            guard: 'hasOtherToolsRunning',
            ...toTool('removeTool', 'A parallel tool call ended while others still run: still tool (the latest running one)'),
          },
          fresh('.thinking', 'docs/agents.md: tool_execution_end -> thinking'),
        ],
        'agent.ready': fresh(
          '.idle',
          'docs/agents.md: agent ready before any prompt (or a new, resumed, forked or reloaded session) -> idle',
        ),
        'session.tree': fresh('.idle', 'docs/agents.md: session_tree -> idle'),
        'session.compact': {
          description: 'docs/agents.md: session_compact -> no change',
          meta: { row: 'tether' },
        },
        'agent.hello': helloTargets('.'),
        'ask.open': {
          target: '.awaiting-input.asked',
          actions: ['stamp', 'holdAsk'],
          description: 'The agent asks (a permission, a question) and waits: awaiting-input with the ask',
          meta: { row: ['any --the agent asks--> awaiting-input'] },
        },
        'agent.stop': [
          {
            target: '.awaiting-input.stopped',
            guard: 'isApiStop',
            actions: ['stamp', 'clearTools', 'holdStop'],
            description: 'The agent gave up on its model API (a usage limit, an error) and waits: awaiting-input with the stop',
            meta: { row: ['any --the agent stops [a usage limit or an API error]--> awaiting-input (stopped)'] },
          },
          toExited("The agent's process ended while it still reported: exited, with the stop", [
            'any --the agent stops [its process ended]--> exited',
          ]),
        ],
        'agent.gone': fresh('absent', "The agent's connection closed (quit, killed): no agent reports any more"),
      },
      states: {
        idle: { description: 'Ready for a prompt, none given yet (or after /tree)' },
        thinking: { description: 'The agent is working on a prompt (between tool calls)' },
        tool: { description: 'A tool call is running' },
        'awaiting-input': {
          description: 'The agent waits for the user (push-worthy): for a prompt, or on an ask',
          initial: 'waiting',
          states: {
            waiting: {
              description: 'The agent finished and waits for a prompt (the context holds its `done` stop)',
              exit: 'clearStop',
            },
            stopped: {
              description: 'The agent gave up on its model API (a usage limit, an error) and waits (the context holds the stop)',
              exit: 'clearStop',
            },
            asked: {
              description: 'The agent put a question on screen and waits on it (the context holds the ask)',
              exit: 'clearAsk',
              on: {
                'ask.answered': [
                  {
                    guard: 'isRunAnswer',
                    ...toTool('runAskedTool', 'An answer that runs the asked tool landed: tool while it runs', [
                      'asked --an answer lands [the choice runs the tool]--> tool',
                    ]),
                  },
                  {
                    guard: 'isWaitAnswer',
                    ...fresh('waiting', 'An answer after which the agent waits for the person landed (a refusal)', [
                      'asked --an answer lands [the choice makes the agent wait]--> awaiting-input',
                    ]),
                  },
                  {
                    guard: 'isResumeAnswer',
                    ...fresh('#agentState.reporting.thinking', 'An answer after which the agent goes on landed (a question answered)', [
                      'asked --an answer lands [the choice lets the agent go on]--> thinking',
                    ]),
                  },
                ],
                'ask.ended': {
                  target: 'waiting',
                  guard: 'isPendingAsk',
                  description: "The ask ended without tether's answer (the terminal answered, the agent moved on): it goes away",
                  meta: { row: ['asked --the ask ends without an answer--> awaiting-input'] },
                },
              },
            },
          },
        },
      },
    },
  },
});

/** The value a snapshot of the machine reports, or null while no agent is there. */
export function agentStateValue(snapshot: { value: unknown }): AgentStateValue | null {
  const v = snapshot.value;
  if (!v || typeof v !== 'object' || !('reporting' in v)) return null;
  const reporting = (v as { reporting: AgentStateValue | Record<string, unknown> }).reporting;
  return typeof reporting === 'string' ? reporting : 'awaiting-input';
}

/** The tool a snapshot in `tool` reports: the most recently started call still running. */
export function agentStateTool(context: AgentStateContext): string | undefined {
  return context.tools[context.tools.length - 1]?.name;
}
