/**
 * Model-based test of the continue machine (docs/contract.md "Scheduled continue"): a path for
 * every transition (test/helpers/transitions.ts), planned with xstate/graph from the machine
 * itself, is run against the REAL continue service over a real tmux server: the schedule is kept
 * in the session's tmux user option, read back from it at a "daemon start" (a new service), and
 * typed into the pane (a real `cat`, whose screen shows what it got). The agents the service
 * watches are a stand-in the test moves (a turn started, another stop), and its timer is the
 * test's, so "its time comes" happens at the step that says so.
 *
 * After each step, what a person would see must be what the machine says: the schedule's status
 * (and why, when skipped) as the service shows it, the same schedule in tmux, and the text on
 * the pane exactly when it was typed, and then in the answer log, by the device that chose it.
 */
import { describe, expect } from 'vitest';
import { continueMachine, type ContinueEvent } from '../../src/machines/continue.machine.js';
import { silentLogger } from '../../src/log.js';
import { SKIP_REASONS, type ContinueSchedule, type ContinueStatus } from '../../src/protocol/continue.js';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import type { Stop } from '../../src/protocol/stop.js';
import type { AnswerEntry } from '../../src/service/answers/answer-log.js';
import { ContinueService } from '../../src/service/continue/continue.service.js';
import { readContinueOption, writeContinueOption } from '../../src/tmux/sessions/continue-option.js';
import { modelTestsOverTmux, tmuxLinePane } from '../helpers/model-over-tmux.js';
import { eventually } from '../helpers/tmux.js';
import { TransitionCoverage, transitionCoveringPaths } from '../helpers/transitions.js';

const AT = '2026-01-01T00:00:00.000Z';
const WAITING: ContinueSchedule = { id: 'c1', at: AT, text: 'continue', by: 'phone', stopId: 's1', status: 'waiting' };
const restore = (status: ContinueStatus): ContinueEvent => ({ type: 'continue.restore', schedule: { ...WAITING, status } });
const EVENTS: ContinueEvent[] = [
  { type: 'continue.schedule', schedule: WAITING },
  restore('waiting'),
  restore('typed'),
  restore('skipped'),
  restore('cancelled'),
  { type: 'continue.cancel', at: AT },
  { type: 'agent.moved-on', why: 'turn', at: AT },
  { type: 'continue.due', stopId: 's1', busy: false, late: false, at: AT },
  { type: 'continue.due', stopId: 's1', busy: true, late: false, at: AT },
  { type: 'continue.due', stopId: 's1', busy: false, late: true, at: AT },
  { type: 'continue.typed', at: AT },
  { type: 'continue.failed', at: AT },
];

const traversal = {
  events: EVENTS,
  serializeState: (s: { value: unknown; context: { restored: boolean } }) => `${JSON.stringify(s.value)}:${s.context.restored}`,
};
const covering = transitionCoveringPaths<never, ContinueEvent, undefined>(continueMachine, traversal, continueMachine);
const coverage = new TransitionCoverage(continueMachine);

const label = (e: ContinueEvent | { type: 'xstate.init' }): string => {
  switch (e.type) {
    case 'continue.restore':
      return `restore(${e.schedule.status})`;
    case 'continue.due':
      return `due(${e.late ? 'late' : e.busy ? 'busy' : 'stopped'})`;
    case 'agent.moved-on':
      return 'turn';
    default:
      return e.type;
  }
};

/** The agents, as the service reads them: the test moves them. */
class StandInAgents {
  fact: AgentStateFact | null = { value: 'awaiting-input', ts: 0 };
  stop: Stop | null = null;
  readonly listeners = new Set<(id: string, fact: AgentStateFact) => void>();
  current = () => this.fact;
  stopOf = () => this.stop;
  subscribeEvery = (l: (id: string, fact: AgentStateFact) => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  /** The agent reports `fact` (the service hears it). */
  report(id: string, fact: AgentStateFact): void {
    this.fact = fact;
    for (const l of this.listeners) l(id, fact);
  }
}

const usageLimit = (id: string): Stop => ({
  id,
  kind: 'usage-limit',
  agent: 'pi',
  message: 'usage limit reached',
  stoppedAt: AT,
  resetsAt: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
});

describe('continue machine, model-based, against the real continue service and tmux', () => {
  modelTestsOverTmux({
    covering,
    coverage,
    label,
    run: async (tmux, steps, n) => {
      const session = `m${n}`;
      await tmux.tmux('new-session', '-d', '-s', session, '-x', '80', '-y', '10', 'cat');
      const agents = new StandInAgents();
      const answers: AnswerEntry[] = [];
      let fire: (() => void) | null = null;
      let failTyping = false;
      const make = () =>
        new ContinueService({
          agents,
          known: () => Promise.resolve(),
          store: { read: (id) => readContinueOption(tmux.cli, id), write: (id, s) => writeContinueOption(tmux.cli, id, s) },
          panes: tmuxLinePane(tmux, () => failTyping),
          answers: { append: (e) => Promise.resolve(void answers.push(e)) },
          now: Date.now,
          log: silentLogger,
          inspect: () => coverage.inspect,
          restartGraceMs: 0,
          timer: (fn) => {
            fire = fn;
            return () => (fire = null);
          },
        });
      let service = make();
      let expected: ContinueStatus | null = null;
      let typed = false;
      let restored = false;
      const text = `go on ${n} #{session_name} ; kill-server`;
      for (const [i, event] of steps.entries()) {
        const next = steps[i + 1];
        switch (event.type) {
          case 'continue.schedule':
            agents.stop = usageLimit('s1');
            await service.schedule(session, { at: 'reset', text }, 'phone');
            expected = 'waiting';
            break;
          case 'continue.restore': {
            // What an earlier daemon left in tmux; this daemon reads it at its start.
            const late = next?.type === 'continue.due' && next.late;
            const at = new Date(Date.now() + (late ? -2 : 1) * 60 * 60 * 1000).toISOString();
            const status = event.schedule.status;
            const outcome =
              status === 'skipped' ? { decidedAt: AT, reason: SKIP_REASONS.turn } : status !== 'waiting' ? { decidedAt: AT } : {};
            await writeContinueOption(tmux.cli, session, { ...WAITING, text, at, status, ...outcome });
            restored = true;
            service.stop();
            service = make();
            await service.restore([session]);
            expected = late ? 'skipped' : status;
            break;
          }
          case 'continue.cancel':
            await service.cancel(session);
            expected = 'cancelled';
            break;
          case 'agent.moved-on':
            agents.report(session, { value: 'thinking', ts: 1 });
            expected = 'skipped';
            break;
          case 'continue.due':
            // Read back too late: due at the restore itself. (A schedule made in this run is never late.)
            if (event.late && restored) break;
            if (event.busy) agents.fact = { value: 'thinking', ts: 1 }; // a turn the service has not heard of yet
            failTyping = next?.type === 'continue.failed';
            expect(fire, 'a timer is armed').not.toBeNull();
            fire!();
            expected = event.busy ? 'skipped' : failTyping ? 'skipped' : 'typed';
            typed = !event.busy && !failTyping;
            break;
          case 'continue.typed':
          case 'continue.failed':
            break; // the service went on from `typing` by itself
        }
        const want = expected;
        const shown = await eventually(
          () => (service.of(session)?.status === want ? service.of(session) : null),
          10_000,
          25,
          `status ${want}`,
        );
        await eventually(
          async () => expect(await readContinueOption(tmux.cli, session)).toEqual(service.of(session)) ?? true,
          10_000,
          25,
          'tmux holds the schedule',
        );
        if (want === 'skipped') expect(Object.values(SKIP_REASONS)).toContain(shown!.reason);
      }
      if (typed) {
        await eventually(async () => (await tmux.capture(`=${session}:`)).includes(text), 10_000, 25, 'the text on the pane');
        await eventually(() => answers.length === 1, 5_000, 25, 'the answer logged');
        expect(answers[0]).toMatchObject({ session, kind: 'continue', by: 'phone', landed: true });
      } else {
        expect(await tmux.capture(`=${session}:`)).not.toContain('go on');
        expect(answers).toEqual([]);
      }
      service.stop();
      await tmux.tmux('kill-session', '-t', `=${session}`);
    },
  });
});
