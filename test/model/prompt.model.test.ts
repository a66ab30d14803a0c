/**
 * Model-based test of the prompt machine (docs/contract.md "Prompt"): a path for every
 * transition (test/helpers/transitions.ts), planned with xstate/graph from the machine itself, is
 * run against the REAL prompt service over a real tmux server: the queue is kept in the session's
 * tmux user option, read back from it at a "daemon start" (a new service), and typed into the
 * pane, whose program shows each line it gets as `<line>` (its terminal does not echo), so the
 * screen shows exactly what was typed and each Enter. The agents the service watches are a
 * stand-in the test moves (a turn, a wait, the agent's report of the prompt), and its timer is the
 * test's, so "no report" and "no report in time" happen at the step that says so.
 *
 * After each step, what a person would see must be what the machine says: the prompt's status
 * (and why, when failed) as the service lists it, the same prompt in tmux, and the pane showing
 * the text exactly when it was typed, and one more Enter only where the machine retried.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import {
  PROMPT_FAIL_REASONS,
  PROMPT_STATUSES,
  promptMachine,
  type PromptEvent,
  type PromptFailure,
  type PromptRecord,
  type PromptStatus,
} from '../../src/machines/prompt.machine.js';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import { SESSION_OPTIONS } from '../../src/tmux/layout.js';
import { PROMPT_WAITS } from '../../src/service/prompts/prompt-deps.js';
import { PromptsService } from '../../src/service/prompts/prompts.service.js';
import { encodePromptsOption, readPromptsOption } from '../../src/tmux/sessions/prompts-option.js';
import { hasSession, setUserOption } from '../../src/tmux/sessions/sessions.js';
import { modelTestsOverTmux, tmuxLinePane } from '../helpers/model-over-tmux.js';
import { eventually } from '../helpers/tmux.js';
import { TransitionCoverage, transitionCoveringPaths } from '../helpers/transitions.js';

const AT = '2026-12-04T10:15:03.118Z';
const ID = 'phone-7f3a';
const QUEUED: PromptRecord = { id: ID, text: 'fix the login page', by: 'phone', status: 'queued', createdAt: AT };
const restore = (status: PromptStatus): PromptEvent => ({ type: 'prompt.restore', record: { ...QUEUED, status }, at: AT });
const EVENTS: PromptEvent[] = [
  { type: 'prompt.queue', record: QUEUED },
  ...PROMPT_STATUSES.map(restore),
  { type: 'prompt.cancel', at: AT },
  { type: 'prompt.turn' },
  { type: 'prompt.typed', reports: true, at: AT },
  { type: 'prompt.typed', reports: false, at: AT },
  { type: 'prompt.untyped', at: AT },
  { type: 'prompt.unconfirmed', showsText: true },
  { type: 'prompt.unconfirmed', showsText: false },
  { type: 'prompt.retried' },
  { type: 'prompt.timeout', at: AT },
  { type: 'agent.took', at: AT },
  { type: 'session.ended', why: 'exited', at: AT },
  { type: 'session.ended', why: 'deleted', at: AT },
];

const traversal = { events: EVENTS, serializeState: (s: { value: unknown }) => JSON.stringify(s.value) };
const covering = transitionCoveringPaths<never, PromptEvent, undefined>(promptMachine, traversal, promptMachine);
const coverage = new TransitionCoverage(promptMachine);

const label = (e: PromptEvent | { type: 'xstate.init' }): string => {
  switch (e.type) {
    case 'prompt.restore':
      return `restore(${e.record.status})`;
    case 'prompt.typed':
      return e.reports ? 'typed(reported)' : 'typed(reports nothing)';
    case 'prompt.unconfirmed':
      return e.showsText ? 'no report(text shows)' : 'no report(box cleared)';
    case 'session.ended':
      return `ended(${e.why})`;
    default:
      return e.type;
  }
};

/** The agents, as the service reads them: the test moves them. */
class StandInAgents {
  fact: AgentStateFact | null = { value: 'thinking', ts: 0 };
  reports: boolean | null = true;
  private readonly states = new Set<(id: string, fact: AgentStateFact) => void>();
  private readonly said = new Set<(id: string, text: string) => void>();
  current = () => this.fact;
  reportsPrompts = () => this.reports;
  subscribeEvery = (l: (id: string, fact: AgentStateFact) => void) => {
    this.states.add(l);
    return () => this.states.delete(l);
  };
  onUserMessage = (l: (id: string, text: string) => void) => {
    this.said.add(l);
    return () => this.said.delete(l);
  };
  /** The agent reports `fact` (the service hears it). */
  report(id: string, fact: AgentStateFact): void {
    this.fact = fact;
    for (const l of this.states) l(id, fact);
  }
  /** The agent reports that the user submitted `text`. */
  say(id: string, text: string): void {
    for (const l of this.said) l(id, text);
  }
}

/** The service's timer in the test's hands: each wait is armed, and fired by the step that says so. */
class StandInTimer {
  private readonly armed: { fn: () => void; ms: number; live: boolean }[] = [];
  readonly timer = (fn: () => void, ms: number): (() => void) => {
    const t = { fn, ms, live: true };
    this.armed.push(t);
    return () => void (t.live = false);
  };
  /** Waits until a wait of `ms` is armed. */
  async armedFor(ms: number, what: string): Promise<void> {
    await eventually(() => this.armed.some((t) => t.live && t.ms === ms), 10_000, 10, what);
  }
  /** Fires the wait of `ms` (there is exactly one). */
  fire(ms: number): void {
    const live = this.armed.filter((t) => t.live && t.ms === ms);
    expect(live, `one wait of ${ms} ms armed`).toHaveLength(1);
    live[0]!.live = false;
    live[0]!.fn();
  }
}

/** `text` as a regular expression that matches it literally. */
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a person would see of the prompt after a step. */
interface Expected {
  status: PromptStatus;
  reason?: PromptFailure;
}

/** The pane's program: no echo, and each line it gets shown as `<line>`, so each Enter shows. */
const PROGRAM = `stty -echo
printf 'ready\\n'
while IFS= read -r line; do printf '<%s>\\n' "$line"; done
`;

describe('prompt machine, model-based, against the real prompt service and tmux', () => {
  let program: string;
  modelTestsOverTmux({
    covering,
    coverage,
    label,
    prepare: (tmux) => {
      program = join(tmux.dir, 'program.sh');
      writeFileSync(program, PROGRAM);
    },
    run: async (tmux, steps, n) => {
      const session = `p${n}`;
      const target = `=${session}:`;
      await tmux.tmux('new-session', '-d', '-s', session, '-x', '80', '-y', '12', `sh ${program}`);
      await tmux.tmux('set-option', '-w', '-t', target, 'remain-on-exit', 'on');
      await eventually(async () => (await tmux.capture(target)) === 'ready', 10_000, 10, 'the program ready');
      const agents = new StandInAgents();
      const clock = new StandInTimer();
      const failed: PromptRecord[] = [];
      const told: PromptRecord[] = [];
      const typedKeys: string[] = [];
      let failTyping = false;
      let exited = false;
      const make = () => {
        const service = new PromptsService({
          agents,
          known: async (id) => {
            if (!(await hasSession(tmux.cli, id))) throw new DomainError('session-not-found', `no session named "${id}"`);
          },
          panes: {
            ...tmuxLinePane(
              tmux,
              () => failTyping,
              (message) => typedKeys.push(message.type === 'keys' ? message.data : `[${message.type === 'key' ? message.name : ''}]`),
            ),
            screen: async (id) => (await tmux.tmux('capture-pane', '-p', '-t', `=${id}:`)).replace(/\n$/, ''),
            exited: () => exited,
          },
          store: {
            read: (id) => readPromptsOption(tmux.cli, id),
            write: (id, stored) => setUserOption(tmux.cli, id, SESSION_OPTIONS.prompts, encodePromptsOption(stored)),
          },
          now: Date.now,
          log: silentLogger,
          inspect: () => coverage.inspect,
          failed: (_id, record) => void failed.push(record),
          waits: PROMPT_WAITS,
          timer: clock.timer,
        });
        service.onChange((id, record) => {
          if (id === session) told.push(record);
        });
        return service;
      };
      let service = make();
      // What the pane shows: the program's lines since the screen was last cleared.
      let screen = ['ready'];
      let expected: Expected | null = null;
      let deleted = false;
      let failedHere = false;
      const text = `ask ${n}: #{session_name} ; kill-server`;
      for (const [i, event] of steps.entries()) {
        const next = steps[i + 1];
        switch (event.type) {
          case 'prompt.queue': {
            // The agent is in a turn: the prompt waits.
            const { record, created } = await service.submit(session, { text, id: ID }, 'phone');
            expect(created).toBe(true);
            expect(record).toMatchObject({ id: ID, text, by: 'phone', status: 'queued' });
            expected = { status: 'queued' };
            break;
          }
          case 'prompt.restore': {
            // What an earlier daemon left in tmux; this daemon reads it at its start.
            const status = event.record.status;
            const outcome =
              status === 'failed'
                ? { decidedAt: AT, reason: PROMPT_FAIL_REASONS.unconfirmed }
                : status === 'queued' || status === 'typing'
                  ? {}
                  : { decidedAt: AT };
            const record: PromptRecord = { ...QUEUED, text, status, ...outcome };
            await setUserOption(tmux.cli, session, SESSION_OPTIONS.prompts, encodePromptsOption({ v: 1, prompts: [record], older: [] }));
            service.stop();
            service = make();
            await service.restore([session]);
            expected = status === 'typing' ? { status: 'failed', reason: 'interrupted' } : { status };
            if (status === 'failed') expected.reason = 'unconfirmed';
            failedHere = status === 'typing';
            break;
          }
          case 'prompt.cancel':
            expect(await service.cancel(session, ID)).toMatchObject({ id: ID, status: 'cancelled' });
            expected = { status: 'cancelled' };
            break;
          case 'prompt.turn':
            // The agent awaits input with no open ask: its turn. The service types it by itself,
            // and goes on to what the next step says happened.
            if (next?.type === 'prompt.typed' && !next.reports) {
              agents.reports = false;
              expected = { status: 'typed' };
            } else if (next?.type === 'prompt.untyped') {
              failTyping = true;
              expected = { status: 'failed', reason: 'untyped' };
              failedHere = true;
            } else {
              expected = { status: 'typing' };
            }
            if (!failTyping) screen = [...screen, `<${text}>`];
            agents.report(session, { value: 'awaiting-input', ts: 1 });
            break;
          case 'prompt.typed':
            // Typed (at the turn); one that the agent reports waits for the report.
            if (event.reports) await clock.armedFor(PROMPT_WAITS.confirmMs, 'the wait for the report');
            break;
          case 'prompt.untyped':
            break; // the keys (or the one more Enter) failed at the step before
          case 'prompt.unconfirmed':
            await clock.armedFor(PROMPT_WAITS.confirmMs, 'the wait for the report');
            if (!event.showsText) {
              // The agent took the Enter and cleared its input box, but reported nothing.
              await tmux.tmux('send-keys', '-R', '-t', target);
              await tmux.tmux('clear-history', '-t', target);
              screen = [];
              await eventually(async () => (await tmux.capture(target)) === '', 10_000, 10, 'the box cleared');
            } else if (next?.type === 'prompt.untyped') {
              failTyping = true;
              expected = { status: 'failed', reason: 'untyped' };
              failedHere = true;
            } else {
              screen = [...screen, '<>'];
            }
            clock.fire(PROMPT_WAITS.confirmMs);
            break;
          case 'prompt.retried':
            await clock.armedFor(PROMPT_WAITS.submitMs, 'the last wait for the report');
            break;
          case 'prompt.timeout':
            await clock.armedFor(PROMPT_WAITS.submitMs, 'the last wait for the report');
            clock.fire(PROMPT_WAITS.submitMs);
            expected = { status: 'failed', reason: 'unconfirmed' };
            failedHere = true;
            break;
          case 'agent.took':
            // The agent's own report (its hook, its file, its event), as opencode sends it: with a trailing space.
            agents.report(session, { value: 'thinking', ts: 2 });
            agents.say(session, `${text} `);
            expected = { status: 'submitted' };
            break;
          case 'session.ended':
            if (event.why === 'exited') {
              // The agent exits (EOF on its input); the daemon sees the pane dead and says so.
              await tmux.tmux('send-keys', '-t', target, 'C-d');
              await eventually(
                async () => (await tmux.tmux('display-message', '-p', '-t', target, '#{pane_dead}')).trim() === '1',
                10_000,
                10,
                'the pane dead',
              );
              exited = true;
              service.agentExited(session, 'exited');
              expected = { status: 'failed', reason: 'exited' };
              failedHere = true;
            } else {
              await tmux.tmux('kill-session', '-t', `=${session}`);
              service.forget(session);
              deleted = true;
              expected = { status: 'failed', reason: 'deleted' };
            }
            break;
        }
        const want = expected!;
        if (deleted) {
          // The session is gone: its clients were told, and it lists nothing any more.
          await eventually(() => told.at(-1)?.status === 'failed', 10_000, 10, 'the clients told');
          expect(told.at(-1)).toMatchObject({ id: ID, status: 'failed', reason: PROMPT_FAIL_REASONS.deleted });
          await expect(service.list(session)).rejects.toMatchObject({ code: 'session-not-found' });
          continue;
        }
        const shown = (await eventually(
          async () => {
            const listed = await service.list(session);
            return listed.length === 1 && listed[0]!.status === want.status ? listed[0]! : null;
          },
          10_000,
          10,
          `status ${want.status}`,
        ))!;
        expect(shown).toMatchObject({ id: ID, text, by: 'phone', createdAt: expect.any(String) as unknown });
        if (want.reason !== undefined) expect(shown.reason).toBe(PROMPT_FAIL_REASONS[want.reason]);
        else expect(shown.reason).toBeUndefined();
        expect(shown.decidedAt === undefined).toBe(want.status === 'queued' || want.status === 'typing');
        await eventually(
          async () => expect(await readPromptsOption(tmux.cli, session)).toEqual({ v: 1, prompts: [shown], older: [] }) ?? true,
          10_000,
          10,
          'tmux holds the prompt',
        );
        const lines = screen.join('\n');
        // A dead pane keeps what it showed (tmux may scroll it up for its own line about the exit).
        await eventually(
          async () => {
            if (!exited) return expect(await tmux.capture(target)).toBe(lines) ?? true;
            const seen = await tmux.tmux('capture-pane', '-p', '-S', '-50', '-t', target);
            return expect(seen).toMatch(new RegExp(`^${escape(lines)}(?:\n|$)`)) ?? true;
          },
          10_000,
          10,
          `the pane showing ${JSON.stringify(lines)}`,
        );
      }
      // Nothing more reached the pane than the steps said: the text at most once, Enter at most twice.
      expect(typedKeys.filter((k) => k === text).length).toBeLessThanOrEqual(1);
      expect(typedKeys.filter((k) => k === '[Enter]').length).toBeLessThanOrEqual(2);
      if (!deleted && !exited) expect(await tmux.capture(target)).toBe(screen.join('\n'));
      // A failure is pushed once; an outcome read back is not pushed again.
      expect(failed.length).toBe(failedHere ? 1 : 0);
      // Every change was told once.
      const statuses = told.map((r) => r.status);
      expect(statuses.filter((s, k) => s === statuses[k - 1])).toEqual([]);
      service.stop();
      if (!deleted) await tmux.tmux('kill-session', '-t', `=${session}`);
    },
  });
});
