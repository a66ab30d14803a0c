/**
 * The one table of what a stop kind means (src/push/stop-meanings.ts): that the compiler's promise
 * (a row for every kind) holds at run time, that the docs say what the rows say, that each room
 * (push, the Live Activity card, continue) does for every kind what its row says, and that no
 * other file of src/ tells the kinds apart by name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import { STOP_KINDS, type Stop, type StopKind } from '../../src/protocol/stop.js';
import { alertPayload, type PushAlert } from '../../src/push/alert.js';
import { contentStateOf } from '../../src/push/live-activity-content.js';
import { activityPayload } from '../../src/push/live-activity-payload.js';
import { isCleanExit, resetClock, STOP_MEANINGS } from '../../src/push/stop-meanings.js';
import { startPushTrigger } from '../../src/service/alerts/push-trigger.js';
import { checkContinueRequest } from '../../src/service/continue/continue-request.js';
import { LimitResets } from '../../src/service/continue/limit-reset.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NOW = Date.UTC(2026, 10, 28, 12);
const RESETS = new Date(NOW + 3_600_000).toISOString();

/** A stop of `kind` with everything a kind may carry (a reset, a status). */
const stopOf = (kind: StopKind, more: Partial<Stop> = {}): Stop => ({
  id: `s-${kind}`,
  kind,
  agent: 'claude',
  message: `words of ${kind}`,
  stoppedAt: new Date(NOW).toISOString(),
  resetsAt: RESETS,
  ...(kind === 'exited' ? { exitCode: 3 } : {}),
  ...more,
});

describe('the table of stop meanings', () => {
  it('has a row for every kind and none else', () => {
    expect(Object.keys(STOP_MEANINGS).sort()).toEqual([...STOP_KINDS].sort());
  });

  it('says what docs/push.md "Stops" and docs/api.md "Stops" say of each kind', () => {
    const push = readFileSync(join(ROOT, 'docs/push.md'), 'utf8');
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const yes = (b: boolean) => (b ? 'yes' : 'no');
    const code = (text: string) => (text === '' ? 'none' : `\`${text}\``);
    for (const kind of STOP_KINDS) {
      const row = STOP_MEANINGS[kind];
      const cells = push
        .split('\n')
        .find((l) => l.startsWith(`| \`${kind}\` |`))
        ?.split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      expect(cells, `docs/push.md's row of ${kind}`).toBeDefined();
      const [, pushed, , title, category, timeSensitive, words, continueAble] = cells!;
      expect(pushed).toContain(
        { stop: 'its own alert', waiting: 'the "waiting" alert', 'agent-exited': 'the `agent-exited` alert' }[row.pushed],
      );
      const titles = [row.title('<agent>', {}), row.title('<agent>', { signal: '<signal>' }), row.title('<agent>', { exitCode: 7 })];
      for (const t of new Set(titles)) expect(title).toContain(`\`${t.replace(' 7', ' <n>')}`);
      expect([category, timeSensitive, words, continueAble]).toEqual([
        code(row.category ?? ''),
        yes(row.timeSensitive),
        code(row.fallbackWords),
        yes(row.continueAble),
      ]);
      expect(api).toContain(`\`${kind}\`: `);
    }
    expect(STOP_MEANINGS['usage-limit'].title('Claude', { resetsAt: RESETS })).toBe(
      `Claude reached its usage limit · resets ${resetClock(RESETS)}`,
    );
  });

  it('calls a clean exit (status 0 or untold, no signal) nobody, a crash or a failure the person', () => {
    expect([isCleanExit(0, null), isCleanExit(null, null), isCleanExit(undefined, undefined)]).toEqual([true, true, true]);
    expect([isCleanExit(3, null), isCleanExit(null, 9), isCleanExit(undefined, 'SIGKILL')]).toEqual([false, false, false]);
    expect(STOP_MEANINGS.exited.urgent({ exitCode: 0 })).toBe(false);
    expect(STOP_MEANINGS.exited.urgent({})).toBe(false);
    expect(STOP_MEANINGS.exited.urgent({ exitCode: 1 })).toBe(true);
    expect(STOP_MEANINGS.exited.urgent({ signal: 'SIGKILL' })).toBe(true);
  });
});

describe('every room does for each kind what its row says', () => {
  it('push: a stop is pushed as its own alert exactly when its row says so, with its title, category, urgency and words', () => {
    const hub: { report?: (id: string, fact: AgentStateFact) => void } = {};
    const sent: PushAlert[] = [];
    const stopTrigger = startPushTrigger({
      events: ['awaiting-input'],
      subscribeEvery: (l) => ((hub.report = l), () => delete hub.report),
      onSessionEnded: () => () => undefined,
      onAttention: () => () => undefined,
      send: (_id, alert) => sent.push(alert),
    });
    for (const kind of STOP_KINDS) {
      sent.length = 0;
      hub.report?.(kind, { value: 'awaiting-input', ts: 0, stop: stopOf(kind) });
      const pushed = STOP_MEANINGS[kind].pushed === 'stop';
      expect(sent.map((a) => a.kind)).toEqual([pushed ? 'stopped' : 'awaiting-input']);
      for (const message of ['', 'the words']) {
        const stop = stopOf(kind, { message });
        const payload = JSON.parse(alertPayload('Claude', 's', { name: 's' }, { kind: 'stopped', stop }).toString()) as {
          aps: { alert: { title: string; body: string }; category?: string; 'interruption-level'?: string };
          stopKind: string;
        };
        const row = STOP_MEANINGS[kind];
        expect(payload.aps.alert.title).toBe(row.title('Claude', stop));
        expect(payload.aps.alert.body).toBe(message !== '' ? message : row.fallbackWords);
        expect(payload.aps.category).toBe(row.category ?? undefined);
        expect(payload.aps['interruption-level']).toBe(row.timeSensitive ? 'time-sensitive' : undefined);
        expect(payload.stopKind).toBe(kind);
      }
    }
    stopTrigger();
  });

  it('the card: a stop needs the person, with its words and its push title, exactly when its row says so', () => {
    for (const kind of STOP_KINDS) {
      for (const more of [{}, { message: '' }, { exitCode: 0 }, { signal: 'SIGKILL' }] as Partial<Stop>[]) {
        const stop = stopOf(kind, more);
        const urgent = STOP_MEANINGS[kind].urgent(stop);
        const sessions = [{ sessionId: 'a', name: 'a', agent: 'pi', state: 'awaiting-input' as const, stop, changedAt: 1 }];
        const content = contentStateOf(sessions);
        expect(content.needsYou).toBe(urgent);
        expect(content.state).toBe(urgent ? 'stopped' : 'waiting');
        if (!urgent) continue;
        expect(content.words).toBe(stop.message !== '' ? stop.message : STOP_MEANINGS[kind].fallbackWords);
        const aps = (
          JSON.parse(activityPayload({ event: 'update', alert: true }, sessions, 1).toString()) as { aps: { alert: { title: string } } }
        ).aps;
        expect(aps.alert.title).toBe(STOP_MEANINGS[kind].title('pi', stop));
      }
    }
  });

  it('continue: `at: "reset"` is taken, and a passed reset told, exactly for a continue-able kind', () => {
    for (const kind of STOP_KINDS) {
      const stop = stopOf(kind);
      const able = STOP_MEANINGS[kind].continueAble;
      const take = () => checkContinueRequest({ at: 'reset' }, stop, NOW);
      if (able) expect(take().stopId).toBe(stop.id);
      else expect(take).toThrow(expect.objectContaining({ code: 'no-usage-limit' }) as Error);

      const hub: { report?: (id: string, fact: AgentStateFact) => void } = {};
      const timers: (() => void)[] = [];
      const told: string[] = [];
      const resets = new LimitResets({
        subscribeEvery: (l) => ((hub.report = l), () => delete hub.report),
        stopOf: () => stop,
        continueOf: () => null,
        now: () => NOW,
        timer: (fn) => (timers.push(fn), () => undefined),
      });
      resets.onReset((_id, stopId) => told.push(stopId));
      hub.report?.('a', { value: 'awaiting-input', ts: 0, stop });
      for (const fire of timers) fire();
      expect(told).toEqual(able ? [stop.id] : []);
      resets.stop();
    }
  });
});

/** Every hand-written .ts file under `dir`, relative to the repository. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.checks.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe('no other room decides what a kind means', () => {
  // The table; the agent-state machine, which holds the list (a machine imports nothing above it)
  // and tells an exit from the rest by its own states; the agents' readers, which say which kind a
  // report of their agent is.
  const ALLOWED = [/^src\/push\/stop-meanings\.ts$/, /^src\/machines\/agent-state\.machine\.ts$/, /^src\/agent\//];
  const KINDS = STOP_KINDS.map((k) => k.replace('-', '\\-')).join('|');
  /** A kind compared by name, or the one kind no other list of tether's has, anywhere. */
  const NAMED = new RegExp(`\\bkind\\s*[!=]==?\\s*'(?:${KINDS})'|'(?:${KINDS})'\\s*[!=]==?\\s*[\\w.?]*kind\\b|'usage-limit'`);

  it('src/ compares no stop kind by name, nor lists the kinds, outside the table', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      if (ALLOWED.some((re) => re.test(file))) continue;
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (NAMED.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('the check finds what it looks for', () => {
    for (const line of [
      "if (stop.kind === 'usage-limit')",
      "stop?.kind !== 'done'",
      "'exited' === s.kind",
      "const T = { 'usage-limit': 'x' }",
    ])
      expect(NAMED.test(line), line).toBe(true);
    for (const line of ["if (frame.type === 'error')", "throw new DomainError('no-usage-limit', '')", "s.status === 'done'"])
      expect(NAMED.test(line), line).toBe(false);
  });
});
