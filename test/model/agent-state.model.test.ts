/**
 * Model-based test of the agent-state machine: from every state the machine can reach
 * (shortest path, xstate/graph), every event it knows, each path executed against the REAL
 * agent side: the hub behind the real agent socket, an agent speaking the wire protocol over
 * a real Unix socket, its pane on a private tmux server. The agent's events go over the socket;
 * its asks go through the hub's ask entry points, the ones the hook intake calls when an
 * adapter reads an ask from a report (`asked`, `askEnded`) and the answer service calls when it
 * saw an answer taken (`claim`, `typed`, `answered`) (the real agents produce them in
 * test/e2e/asks-claude.test.ts and asks-codex.test.ts). After each step the hub must report exactly what the model says
 * (value, tool, ask), and `null` while no agent is there; and the hub's actors must have taken
 * every transition of the machine (test/helpers/transitions.ts).
 */
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { AgentHub } from '../../src/agent/hub/hub.js';
import { PaneLocator } from '../../src/agent/hub/pane-locator.js';
import { AGENT_PROTOCOL_VERSION, type AgentMessage, type DaemonMessage } from '../../src/agent/wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../../src/agent/wire/json-lines.js';
import { AgentSocketServer } from '../../src/agent/hub/socket-server.js';
import { silentLogger } from '../../src/log.js';
import type { AskRecord } from '../../src/agent/asks/asks.js';
import {
  agentStateMachine,
  agentStateTool,
  agentStateValue,
  type AgentStateEvent,
  type AnswerEffect,
} from '../../src/machines/agent-state.machine.js';
import { choice, permissionAsk, pressed, typed } from '../helpers/ask-opening.js';
import { eventually } from '../helpers/tmux.js';
import { usePaneOnPrivateTmux } from '../helpers/tmux-fixture.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

type Snap = SnapshotFrom<typeof agentStateMachine>;

/** Every event the machine knows, with the payloads that matter (two parallel tool calls). */
const EVENTS: AgentStateEvent[] = [
  { type: 'agent.hello', value: 'idle', ts: 1 },
  { type: 'agent.hello', value: 'thinking', ts: 1 },
  { type: 'agent.hello', value: 'tool', tool: 'bash', ts: 1 },
  { type: 'agent.hello', value: 'awaiting-input', ts: 1 },
  { type: 'agent.ready', ts: 1 },
  { type: 'agent.start', ts: 1 },
  { type: 'tool.start', id: 'a', tool: 'bash', ts: 1 },
  { type: 'tool.start', id: 'b', tool: 'read', ts: 1 },
  { type: 'tool.end', id: 'a', ts: 1 },
  { type: 'tool.end', id: 'b', ts: 1 },
  { type: 'agent.end', idle: true, stop: 'd1', ts: 1 },
  { type: 'agent.end', idle: false, ts: 1 },
  { type: 'session.tree', ts: 1 },
  { type: 'session.compact', ts: 1 },
  { type: 'agent.gone', ts: 1 },
  // Asks: model ids, each mapped to the real (random) id the hub gives it.
  { type: 'ask.open', id: 'k1', tool: 'bash', ts: 1 },
  { type: 'ask.open', id: 'k2', ts: 1 },
  { type: 'ask.answered', id: 'k1', effect: 'run', ts: 1 },
  { type: 'ask.answered', id: 'k1', effect: 'wait', ts: 1 },
  { type: 'ask.answered', id: 'k2', effect: 'resume', ts: 1 },
  { type: 'ask.ended', id: 'k1', ts: 1 },
  // Stops: a usage limit and an error the agent reports, its process ending (tmux tells it).
  { type: 'agent.stop', id: 's1', kind: 'usage-limit', ts: 1 },
  { type: 'agent.stop', id: 's2', kind: 'error', ts: 1 },
  { type: 'agent.stop', id: 's3', kind: 'exited', ts: 1 },
];

const key = (s: Snap) =>
  JSON.stringify([s.value, s.context.tools.map((t) => t.id), s.context.ask?.id ?? null, s.context.stop?.kind ?? null]);
const model = createTestModel(agentStateMachine, { events: EVENTS, serializeState: (s) => key(s) as never });
const toStates = model.getShortestPaths({ allowDuplicatePaths: true });
/** Every (state, event) pair: the shortest path to the state, then the event. */
const CASES = toStates.flatMap((p) =>
  EVENTS.map((event) => {
    const [next] = [model.getPathsFromEvents([...p.steps.map((s) => s.event), event])].flat();
    return { name: `${key(p.state)} + ${JSON.stringify(event)}`, steps: next!.steps };
  }),
);

const coverage = new TransitionCoverage(agentStateMachine);

/** A record of an ask the session does not hold (an answer or end of it changes nothing). */
function stale(): AskRecord {
  return { session: 'work', open: { ask: { id: 'gone' } }, claim: null, hint: null, closure: null } as unknown as AskRecord;
}

/** An agent as the extension is one: a socket speaking the protocol. */
class WireAgent {
  readonly welcomes: DaemonMessage[] = [];
  private constructor(private readonly socket: Socket) {}

  static async connect(path: string, hello: AgentMessage): Promise<WireAgent> {
    const socket = createConnection(path);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const agent = new WireAgent(socket);
    const reader = new JsonLineReader();
    socket.on('data', (d: Buffer) => {
      for (const line of reader.push(d)) agent.welcomes.push(JSON.parse(line) as DaemonMessage);
    });
    agent.send(hello);
    await eventually(() => agent.welcomes.length > 0, 15_000, 5);
    return agent;
  }

  send(message: AgentMessage): void {
    this.socket.write(encodeLine(message));
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The protocol message that produces a machine event. */
function toWire(event: AgentStateEvent): AgentMessage | null {
  switch (event.type) {
    case 'tool.start':
      return { type: 'event', event: 'tool.start', id: event.id, tool: event.tool };
    case 'tool.end':
      return { type: 'event', event: 'tool.end', id: event.id };
    case 'agent.end':
      return { type: 'event', event: 'agent.end', idle: event.idle };
    case 'agent.stop':
      if (event.kind === 'exited') return null;
      return { type: 'stop', kind: event.kind, message: `model ${event.kind}`, resetsAt: 1_800_000_000_000, limit: 'five_hour' };
    case 'agent.hello':
    case 'agent.gone':
    case 'ask.open':
    case 'ask.answered':
    case 'ask.ended':
      return null;
    default:
      return { type: 'event', event: event.type };
  }
}

/** An ask as an adapter reads it (one choice per effect the model's answers take). */
const OPENING = permissionAsk(
  'bash',
  'rm -rf build',
  [choice('yes', 'Yes', 'run', typed('1')), choice('no', 'No', 'wait', pressed('escape')), choice('go', 'Go on', 'resume', typed('3'))],
  { readiness: { quietMs: 0 }, landing: 'report' },
);
const CHOICE_OF: Record<AnswerEffect, string> = { run: 'yes', wait: 'no', resume: 'go' };

describe('agent-state machine, model-based, against the real agent socket', () => {
  // The agent sockets live beside the tmux socket, in the server's temp dir.
  const work = usePaneOnPrivateTmux('work');
  const { tmux } = work;

  it('reaches every state; every transition is taken by some (state, event) case', () => {
    // The cases are every event in every state, so they take every transition the model can take.
    const { unplanned } = transitionCoveringPaths<Snap, AgentStateEvent, undefined>(
      agentStateMachine,
      { events: EVENTS, serializeState: key },
      agentStateMachine,
    );
    expect(unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    const values = new Set(toStates.map((p) => agentStateValue(p.state) ?? 'absent'));
    expect(values).toEqual(new Set(['absent', 'idle', 'thinking', 'tool', 'awaiting-input']));
    const stops = new Set(toStates.map((p) => p.state.context.stop?.kind ?? null));
    expect(stops).toEqual(new Set([null, 'done', 'usage-limit', 'error', 'exited']));
  });

  // The cases share nothing but the pane (each has its own hub and socket) and spend most of their
  // time waiting on the socket: a few run at once (vitest's maxConcurrency).
  CASES.forEach((c, n) => {
    it.concurrent(`case ${n}: ${c.name}`, async ({ expect }) => {
      let clock = 1000;
      const hub = new AgentHub({
        now: () => ++clock,
        log: silentLogger,
        locate: (p, socket) => new PaneLocator(tmux.cli, Date.now).locate(p, socket),
        url: () => 'http://127.0.0.1:1/?token=t',
        inspect: () => coverage.inspect,
      });
      const server = await AgentSocketServer.listen(join(tmux.dir, `a${n}.sock`), hub, silentLogger);
      const agents: WireAgent[] = [];
      let current: WireAgent | null = null;
      let marker = 0;
      /** The hub's record of each model ask id. */
      const asks = new Map<string, AskRecord>();
      try {
        for (const step of c.steps) {
          const e = step.event;
          if (e.type === 'ask.open') {
            const record = hub.asked('work', 'test', { ...OPENING, ...(e.tool ? {} : { tool: undefined }) });
            if (record) asks.set(e.id, record);
          } else if (e.type === 'ask.answered') {
            const record = asks.get(e.id);
            if (record?.closure === null) {
              hub.claim('work', record.open.ask.id, CHOICE_OF[e.effect], { by: 'phone', tokenId: null });
              hub.typed(record);
              hub.answered(record, e.effect);
            } else {
              // An answer to an ask that is over (or another one): what a late answer service would send.
              hub.answered(record ?? stale(), e.effect);
            }
          } else if (e.type === 'ask.ended') {
            // Only the ask the session holds can end (a report ends the open one); another one's end is nothing.
            const open = hub.openAsk('work');
            if (open !== null && asks.get(e.id) === open) hub.askEnded('work', { why: 'terminal' });
          } else if (e.type === 'agent.hello') {
            const hello: AgentMessage = {
              type: 'hello',
              v: AGENT_PROTOCOL_VERSION,
              pane: work.pane,
              tmuxSocket: tmux.socket,
              pid: process.pid,
              state: e.value,
              ...(e.tool ? { tool: e.tool } : {}),
              userMessages: [],
              userMessageCount: 0,
            };
            current = await WireAgent.connect(server.path, hello);
            agents.push(current);
          } else if (e.type === 'agent.stop' && e.kind === 'exited') {
            // tmux told the daemon the agent's pane died (killed by SIGKILL).
            hub.exited('work', { status: null, signal: 9 });
          } else if (e.type === 'agent.gone') {
            current?.close();
            current = null;
          } else if (current) {
            current.send(toWire(e)!);
            // A marker command after the event: once the hub has it, it has the event too.
            const name = `m${++marker}`;
            current.send({ type: 'commands', commands: [{ name, description: '', source: 'extension' }] });
            await eventually(() => hub.commands('work')?.[0]?.name === name, 15_000, 5);
          }
          const value = agentStateValue(step.state);
          await eventually(() => (hub.current('work')?.value ?? null) === value, 15_000, 5);
          const fact = hub.current('work');
          expect(fact?.value ?? null).toBe(value);
          if (value === 'tool') expect(fact?.tool).toBe(agentStateTool(step.state.context));
          // The ask the model holds is the one the session carries (its real id), and the desk's open one.
          const modelAsk = step.state.context.ask;
          const expected = modelAsk ? asks.get(modelAsk.id)?.open.ask.id : undefined;
          expect(fact?.ask?.id).toBe(expected);
          expect(hub.openAsk('work')?.open.ask.id).toBe(expected);
          if (expected !== undefined) expect(fact?.ask?.choices.map((x) => x.id)).toEqual(['yes', 'no', 'go']);
          if (fact) expect(fact.ts).toBeGreaterThan(1000);
          // The stop the model holds is the one the session carries (in its state, and alone while no agent reports).
          const modelStop = step.state.context.stop?.kind;
          expect(hub.stopOf('work')?.kind).toBe(modelStop);
          if (value !== null) expect(fact?.stop?.kind).toBe(modelStop);
          if (modelStop === 'usage-limit') expect(hub.stopOf('work')).toMatchObject({ message: 'model usage-limit', limit: 'five_hour' });
          if (modelStop === 'usage-limit') expect(hub.stopOf('work')?.resetsAt).toBe(new Date(1_800_000_000_000).toISOString());
          if (modelStop === 'exited') expect(hub.stopOf('work')).toMatchObject({ signal: 'SIGKILL', message: 'killed by SIGKILL' });
        }
      } finally {
        for (const a of agents) a.close();
        await server.close();
        hub.stop();
      }
    });
  });

  it("the hub's real actors took every transition of the machine", () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
