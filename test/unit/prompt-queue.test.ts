/**
 * One session's prompts (src/service/prompts/prompt-queue.ts) through the prompt service
 * (src/service/prompts/prompts.service.ts), with stand-ins for the pane, the store, the agents and the
 * timer (docs/api.md "Prompts"): whose turn it is, what waits, what is typed and when, what a
 * client's id answers, what tmux is told, what happens when the session ends or the daemon
 * starts again.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { AgentStateFact, Ask } from '../../src/protocol/frames.js';
import {
  LISTED_DECIDED_PROMPTS,
  MAX_QUEUED_PROMPTS,
  PROMPT_FAIL_REASONS,
  promptDigest,
  type PromptRecord,
  type PromptStatus,
} from '../../src/protocol/prompt.js';
import type { StoredPrompts } from '../../src/protocol/prompt.schemas.js';
import type { InputMessage } from '../../src/protocol/input.js';
import { PROMPT_WAITS } from '../../src/service/prompts/prompt-deps.js';
import { PromptsService } from '../../src/service/prompts/prompts.service.js';
import { eventually } from '../helpers/tmux.js';

const S = 'webapp';
const AT = '2026-12-04T10:15:03.118Z';
const ASK: Ask = {
  id: 'k1',
  kind: 'permission',
  agent: 'claude',
  tool: 'Bash',
  concern: 'rm -rf build',
  choices: [
    { id: 'yes', label: 'Yes' },
    { id: 'no', label: 'No' },
  ],
  askedAt: AT,
};
const fact = (value: AgentStateFact['value'], ask?: Ask): AgentStateFact => ({ value, ts: 0, ...(ask ? { ask } : {}) });

/** The prompt service over stand-ins the test moves; what it typed, kept, told and pushed. */
function harness(start: { fact?: AgentStateFact | null; reports?: boolean | null; stored?: StoredPrompts } = {}) {
  // Each look at the clock moves it a second: the Enter after the text goes at once.
  let clock = Date.parse(AT);
  const typed: InputMessage[] = [];
  const store = new Map<string, StoredPrompts>(start.stored ? [[S, start.stored]] : []);
  const timers: { fn: () => void; ms: number; live: boolean }[] = [];
  const failed: PromptRecord[] = [];
  const told: PromptRecord[] = [];
  const said = new Set<(id: string, text: string) => void>();
  const states = new Set<(id: string, fact: AgentStateFact) => void>();
  const h = {
    fact: start.fact === undefined ? fact('awaiting-input') : start.fact,
    reports: start.reports === undefined ? true : start.reports,
    failWrites: false,
    failInput: false,
    exited: false,
    screen: '' as string | null,
    typed,
    store,
    timers,
    failed,
    told,
  };
  const make = () =>
    new PromptsService({
      agents: {
        current: () => h.fact,
        reportsPrompts: () => h.reports,
        subscribeEvery: (l) => (states.add(l), () => states.delete(l)),
        onUserMessage: (l) => (said.add(l), () => said.delete(l)),
      },
      known: (id) => (id === S ? Promise.resolve() : Promise.reject(new DomainError('session-not-found', `no session named "${id}"`))),
      panes: {
        input: (_id, message) => {
          if (h.failInput) return Promise.reject(new Error('the pane is gone'));
          typed.push(message);
          return Promise.resolve();
        },
        activity: () => null,
        screen: () => Promise.resolve(h.screen),
        exited: () => h.exited,
      },
      store: {
        read: (id) => Promise.resolve(store.get(id) ?? null),
        write: (id, stored) => {
          if (h.failWrites) return Promise.reject(new Error('tmux is gone'));
          store.set(id, structuredClone(stored));
          return Promise.resolve();
        },
      },
      now: () => (clock += 1000),
      log: silentLogger,
      waits: PROMPT_WAITS,
      timer: (fn, ms) => {
        const t = { fn, ms, live: true };
        timers.push(t);
        return () => void (t.live = false);
      },
      failed: (_id, record) => void failed.push(record),
    });
  let service = make();
  const keys = () => typed.map((m) => (m.type === 'key' ? (m.name === 'Enter' ? '⏎' : m.name) : m.data));
  const watch = (s: PromptsService) => s.onChange((id, record) => id === S && told.push(record));
  watch(service);
  return Object.assign(h, {
    get service() {
      return service;
    },
    /** The daemon starts again: a new service reads back what the store keeps. */
    async restart(): Promise<void> {
      service.stop();
      service = make();
      watch(service);
      await service.restore([S]);
    },
    submit: (text: string, id?: string) => service.submit(S, { text, ...(id !== undefined ? { id } : {}) }, 'my iPhone'),
    /** The agent reports `f`. */
    move(f: AgentStateFact): void {
      h.fact = f;
      for (const l of states) l(S, f);
    },
    /** The agent reports that the user submitted `text`. */
    say(text: string): void {
      for (const l of said) l(S, text);
    },
    /** The texts typed so far, and each Enter as `⏎`. */
    keys,
    /** Waits until what was typed is `expected` (the Enter follows the text on its own). */
    async keysAre(expected: string[]): Promise<void> {
      await eventually(() => expect(keys()).toEqual(expected) ?? true, 5_000, 5, `typed ${JSON.stringify(expected)}`);
    },
    async statusOf(id: string): Promise<PromptStatus | undefined> {
      return (await service.list(S)).find((r) => r.id === id)?.status;
    },
    /** Waits until prompt `id` has `status` in the list and in the store, and returns it. */
    async until(id: string, status: PromptStatus): Promise<PromptRecord> {
      const record = await eventually(
        async () => (await service.list(S)).find((r) => r.id === id && r.status === status) ?? null,
        5_000,
        5,
        `prompt ${id} ${status}`,
      );
      await eventually(() => store.get(S)?.prompts.some((r) => r.id === id && r.status === status), 5_000, 5, `tmux: ${id} ${status}`);
      return record!;
    },
    armed: (ms: number) => timers.filter((t) => t.live && t.ms === ms),
    /** Fires the one wait of `ms` armed. */
    fire(ms: number): void {
      const live = timers.filter((t) => t.live && t.ms === ms);
      expect(live, `one wait of ${ms} ms`).toHaveLength(1);
      live[0]!.live = false;
      live[0]!.fn();
    },
  });
}

/** Lets what the service does next (its writes, its microtasks, its typing) run. */
const settle = async (h: { service: PromptsService }) => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
  await h.service.list(S);
};

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('it did not reject');
}

describe('whose turn it is', () => {
  it('keeps the order: the second waits until the turn the first started ended (the agent seen in a turn, then waiting again)', async () => {
    const h = harness();
    await h.submit('first prompt', 'p1');
    await h.until('p1', 'typing');
    await h.keysAre(['first prompt', '⏎']);
    expect((await h.submit('second prompt', 'p2')).record.status).toBe('queued');
    await settle(h);
    expect(await h.statusOf('p2')).toBe('queued');

    h.move(fact('thinking'));
    h.say('first prompt');
    await h.until('p1', 'submitted');
    await settle(h);
    expect(await h.statusOf('p2')).toBe('queued'); // the agent still works on the first
    h.move(fact('tool'));
    await settle(h);
    await h.keysAre(['first prompt', '⏎']);

    h.move(fact('awaiting-input'));
    await h.until('p2', 'typing');
    await h.keysAre(['first prompt', '⏎', 'second prompt', '⏎']);
    expect((await h.service.list(S)).map((r) => `${r.id}:${r.status}`)).toEqual(['p1:submitted', 'p2:typing']);
  });

  it('the agent reporting the prompt before its turn shows still waits for the turn to end', async () => {
    const h = harness();
    await h.submit('first prompt', 'p1');
    await h.until('p1', 'typing');
    await h.submit('second prompt', 'p2');
    h.say('first prompt'); // the report comes first (a hook before the state)
    await h.until('p1', 'submitted');
    h.move(fact('awaiting-input')); // not a turn's end: no turn was seen
    await settle(h);
    expect(await h.statusOf('p2')).toBe('queued');
    h.move(fact('thinking'));
    h.move(fact('awaiting-input'));
    await h.until('p2', 'typing');
  });

  // The wait for its turn passing opens the gate and looks for the next (it once only opened it, and
  // the next prompt stayed queued until the agent reported something again).
  it('a prompt that starts no turn (a slash command): the next is typed once the wait for its turn has passed', async () => {
    const h = harness();
    await h.submit('/compact', 'p1');
    await h.until('p1', 'typing');
    await h.submit('second prompt', 'p2');
    h.say('/compact');
    await h.until('p1', 'submitted');
    await settle(h);
    expect(await h.statusOf('p2')).toBe('queued');
    // The agent waits all along, and says nothing more: the wait for a turn is over.
    h.fire(PROMPT_WAITS.turnStartMs);
    await h.until('p2', 'typing');
    await h.keysAre(['/compact', '⏎', 'second prompt', '⏎']);
  });

  it('a report of another text (a person at the terminal) does not submit the prompt being typed', async () => {
    const h = harness();
    await h.submit('fix the login page', 'p1');
    await h.until('p1', 'typing');
    h.say('something else typed at the terminal');
    await settle(h);
    expect(await h.statusOf('p1')).toBe('typing');
    h.say('fix the login page');
    await h.until('p1', 'submitted');
  });

  it.each([
    ['thinking', fact('thinking')],
    ['running a tool', fact('tool')],
    ['with an open ask', fact('awaiting-input', ASK)],
    ['not known yet (starting)', null],
  ])('a prompt queued while the agent is %s waits', async (_what, f) => {
    const h = harness({ fact: f });
    expect((await h.submit('fix it', 'p1')).record.status).toBe('queued');
    await settle(h);
    expect(await h.statusOf('p1')).toBe('queued');
    expect(h.typed).toEqual([]);
    expect(h.store.get(S)?.prompts.map((r) => r.status)).toEqual(['queued']);
    h.move(fact('awaiting-input', ASK)); // an ask opens: still not its turn
    await settle(h);
    expect(h.typed).toEqual([]);
    h.move(fact('awaiting-input')); // the ask answered, the agent waits for input
    await h.until('p1', 'typing');
    await h.keysAre(['fix it', '⏎']);
  });

  it('an idle agent takes a prompt as one that awaits input does', async () => {
    const h = harness({ fact: fact('idle') });
    await h.submit('fix it', 'p1');
    await h.until('p1', 'typing');
  });

  it('a program that reports nothing (a plain shell) ends typed, and takes the next one at once', async () => {
    const h = harness({ reports: false, fact: null });
    await h.submit('ls -la', 'p1');
    const typed = await h.until('p1', 'typed');
    expect(typed.decidedAt).toBeDefined();
    await h.submit('pwd', 'p2');
    await h.until('p2', 'typed');
    await h.keysAre(['ls -la', '⏎', 'pwd', '⏎']);
    expect(h.armed(PROMPT_WAITS.confirmMs)).toEqual([]); // no report is waited for
    expect(h.failed).toEqual([]);
  });

  it('while the daemon does not know what the session runs, the queue looks again, then goes on', async () => {
    const h = harness({ reports: null });
    await h.submit('fix it', 'p1');
    await settle(h);
    expect(h.typed).toEqual([]);
    expect(h.armed(PROMPT_WAITS.unknownPollMs)).toHaveLength(1);
    h.fire(PROMPT_WAITS.unknownPollMs); // still not known: another look
    await settle(h);
    expect(h.typed).toEqual([]);
    expect(h.armed(PROMPT_WAITS.unknownPollMs)).toHaveLength(1);
    h.reports = true;
    h.fire(PROMPT_WAITS.unknownPollMs);
    await h.until('p1', 'typing');
    await h.keysAre(['fix it', '⏎']);
  });

  it('a failed write of `typing` to tmux types nothing: the prompt fails as untyped', async () => {
    const h = harness({ fact: fact('thinking') });
    await h.submit('fix it', 'p1');
    h.failWrites = true;
    h.move(fact('awaiting-input'));
    const failed = (await eventually(async () => (await h.service.list(S)).find((r) => r.status === 'failed'), 5_000, 5))!;
    expect(failed.reason).toBe(PROMPT_FAIL_REASONS.untyped);
    expect(h.typed).toEqual([]);
    expect(h.failed.map((r) => r.id)).toEqual(['p1']);
  });
});

describe("a client's id", () => {
  it('the same id with the same text answers the prompt as it stands, and types nothing again', async () => {
    const h = harness();
    const first = await h.submit('fix the login page\nand its tests', 'p1');
    expect(first.created).toBe(true);
    await h.until('p1', 'typing');
    const again = await h.submit('fix the login page\nand its tests', 'p1');
    expect(again).toEqual({ record: expect.objectContaining({ id: 'p1', status: 'typing' }) as unknown, created: false });
    h.move(fact('thinking'));
    h.say('fix the login page\nand its tests');
    await h.until('p1', 'submitted');
    // Decided, and sent again with CRLF line ends: the same text.
    const late = await h.submit('fix the login page\r\nand its tests', 'p1');
    expect(late).toEqual({ record: expect.objectContaining({ id: 'p1', status: 'submitted' }) as unknown, created: false });
    await h.keysAre(['fix the login page\nand its tests', '⏎']);
    expect(h.told.filter((r) => r.id === 'p1').map((r) => r.status)).toEqual(['queued', 'typing', 'submitted']);
  });

  it('the same id with another text is refused: prompt-id-conflict', async () => {
    const h = harness({ fact: fact('thinking') });
    await h.submit('fix the login page', 'p1');
    const err = await rejection(h.submit('fix the signup page', 'p1'));
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'prompt-id-conflict', field: 'id' });
    expect(await h.service.list(S)).toHaveLength(1);
  });

  it('without an id, tether chooses one: the same text twice is two prompts', async () => {
    const h = harness({ fact: fact('thinking') });
    const a = await h.submit('go on');
    const b = await h.submit('go on');
    expect(a.record.id).not.toBe(b.record.id);
    expect(a.record.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await h.service.list(S)).toHaveLength(2);
  });

  it(`ids older than the ${LISTED_DECIDED_PROMPTS} decided ones listed still answer a retry, across a restart`, async () => {
    const h = harness({ reports: false });
    const n = LISTED_DECIDED_PROMPTS + 5;
    for (let i = 0; i < n; i++) {
      await h.submit(`prompt ${i}`, `p${i}`);
      await h.until(`p${i}`, 'typed');
    }
    const listed = await h.service.list(S);
    expect(listed.map((r) => r.id)).toEqual(Array.from({ length: LISTED_DECIDED_PROMPTS }, (_, i) => `p${i + 5}`));
    expect(h.store.get(S)?.older).toEqual(
      Array.from({ length: 5 }, (_, i) => ({
        id: `p${i}`,
        digest: promptDigest(`prompt ${i}`),
        status: 'typed',
        by: 'my iPhone',
        createdAt: expect.any(String) as unknown,
      })),
    );
    const typedBefore = h.typed.length;
    for (const service of ['this daemon', 'the next']) {
      if (service === 'the next') await h.restart();
      const retry = await h.submit('prompt 0', 'p0');
      expect(retry).toEqual({
        record: { id: 'p0', text: 'prompt 0', by: 'my iPhone', status: 'typed', createdAt: expect.any(String) as unknown },
        created: false,
      });
      expect(await rejection(h.submit('prompt zero', 'p0'))).toMatchObject({ code: 'prompt-id-conflict' });
      expect(await rejection(h.service.cancel(S, 'p0'))).toMatchObject({ code: 'prompt-not-queued' });
    }
    expect(h.typed.length).toBe(typedBefore);
  });
});

describe('refusals', () => {
  it(`refuses a prompt beyond ${MAX_QUEUED_PROMPTS} queued: prompt-queue-full, nothing kept of it`, async () => {
    const h = harness({ fact: fact('thinking') });
    for (let i = 0; i < MAX_QUEUED_PROMPTS; i++) await h.submit(`prompt ${i}`, `p${i}`);
    const err = await rejection(h.submit('one too many', 'extra'));
    expect(err).toMatchObject({ code: 'prompt-queue-full' });
    await settle(h);
    expect(await h.service.list(S)).toHaveLength(MAX_QUEUED_PROMPTS);
    expect(h.store.get(S)?.prompts).toHaveLength(MAX_QUEUED_PROMPTS);
    expect(h.told.some((r) => r.id === 'extra')).toBe(false);
    // A retry of one queued is still answered.
    expect((await h.submit('prompt 3', 'p3')).created).toBe(false);
    // One decided makes room.
    await h.service.cancel(S, 'p0');
    expect((await h.submit('one too many', 'extra')).created).toBe(true);
  });

  it('refuses a text that breaks the rules, and an exited agent, keeping nothing', async () => {
    const h = harness({ fact: fact('thinking') });
    expect(await rejection(h.submit('  \n', 'p1'))).toMatchObject({ code: 'invalid', field: 'text' });
    expect(await rejection(h.submit('a\u001b[2Jb', 'p1'))).toMatchObject({ code: 'invalid', field: 'text' });
    h.exited = true;
    expect(await rejection(h.submit('fix it', 'p1'))).toMatchObject({ code: 'session-exited' });
    expect(await rejection(h.service.submit('other', { text: 'fix it' }, 'my iPhone'))).toMatchObject({ code: 'session-not-found' });
    expect(await h.service.list(S)).toEqual([]);
    expect(h.store.get(S)).toBeUndefined();
  });

  it('a failed write to tmux on submit throws and leaves nothing queued', async () => {
    const h = harness();
    h.failWrites = true;
    await expect(h.submit('fix it', 'p1')).rejects.toThrow('tmux is gone');
    await settle(h);
    expect(await h.service.list(S)).toEqual([]);
    expect(h.typed).toEqual([]);
    expect(h.store.get(S)).toBeUndefined();
    // Not remembered: the retry is a new prompt, typed in its turn.
    h.failWrites = false;
    expect((await h.submit('fix it', 'p1')).created).toBe(true);
    await h.until('p1', 'typing');
    await h.keysAre(['fix it', '⏎']);
  });

  // Clients hear of a new prompt only once it is written to tmux (they were once told before the
  // write, and nothing told them when it failed).
  it('a prompt whose write to tmux failed was never told to the clients as queued', async () => {
    const h = harness();
    h.failWrites = true;
    await expect(h.submit('fix it', 'p1')).rejects.toThrow('tmux is gone');
    await settle(h);
    expect(h.told).toEqual([]);
  });
});

describe('cancel', () => {
  it('cancels a queued prompt (never typed); refuses one being typed, one decided, and an unknown one', async () => {
    const h = harness({ fact: fact('thinking') });
    await h.submit('first', 'p1');
    await h.submit('second', 'p2');
    const cancelled = await h.service.cancel(S, 'p2');
    expect(cancelled).toMatchObject({ id: 'p2', status: 'cancelled', decidedAt: expect.any(String) as unknown });
    // Answered once tmux has it.
    expect(h.store.get(S)?.prompts.find((r) => r.id === 'p2')?.status).toBe('cancelled');

    h.move(fact('awaiting-input'));
    await h.until('p1', 'typing');
    const typing = await rejection(h.service.cancel(S, 'p1'));
    expect(typing).toMatchObject({ code: 'prompt-not-queued' });
    expect(await rejection(h.service.cancel(S, 'p2'))).toMatchObject({ code: 'prompt-not-queued' });
    expect(await rejection(h.service.cancel(S, 'nope'))).toMatchObject({ code: 'prompt-not-found' });
    expect(await rejection(h.service.cancel('other', 'p1'))).toMatchObject({ code: 'session-not-found' });

    h.move(fact('thinking'));
    h.say('first');
    await h.until('p1', 'submitted');
    h.move(fact('awaiting-input'));
    await settle(h);
    await h.keysAre(['first', '⏎']);
  });
});

describe('the session ends', () => {
  it('the agent exited: every undecided prompt fails with the reason, each pushed once', async () => {
    const h = harness();
    await h.submit('first', 'p1');
    await h.until('p1', 'typing');
    await h.submit('second', 'p2');
    await h.submit('third', 'p3');
    h.exited = true;
    h.service.agentExited(S, 'exited');
    for (const id of ['p1', 'p2', 'p3']) {
      const r = await h.until(id, 'failed');
      expect(r.reason).toBe(PROMPT_FAIL_REASONS.exited);
    }
    expect(h.failed.map((r) => [r.id, r.reason])).toEqual([
      ['p1', PROMPT_FAIL_REASONS.exited],
      ['p2', PROMPT_FAIL_REASONS.exited],
      ['p3', PROMPT_FAIL_REASONS.exited],
    ]);
    await h.keysAre(['first', '⏎']);
    // The agent comes back (respawned): nothing is typed of them.
    h.exited = false;
    h.move(fact('awaiting-input'));
    await settle(h);
    await h.keysAre(['first', '⏎']);
  });

  it('the session was deleted: its undecided prompts fail, its clients are told, nothing is pushed', async () => {
    const h = harness({ fact: fact('thinking') });
    await h.submit('first', 'p1');
    await h.submit('second', 'p2');
    h.service.forget(S);
    expect(h.told.filter((r) => r.status === 'failed').map((r) => [r.id, r.reason])).toEqual([
      ['p1', PROMPT_FAIL_REASONS.deleted],
      ['p2', PROMPT_FAIL_REASONS.deleted],
    ]);
    expect(h.failed).toEqual([]);
    h.move(fact('awaiting-input'));
    await settle(h);
    expect(h.typed).toEqual([]);
  });

  it('a session never used since the start has nothing to fail', () => {
    const h = harness();
    h.service.agentExited(S, 'exited');
    expect(h.failed).toEqual([]);
  });
});

describe('the daemon starts again', () => {
  const record = (id: string, status: PromptStatus, extra: Partial<PromptRecord> = {}): PromptRecord => ({
    id,
    text: `text of ${id}`,
    by: 'my iPhone',
    status,
    createdAt: AT,
    ...extra,
  });

  it('a prompt kept as `typing` fails as interrupted and is never typed; the one queued after it gets its turn', async () => {
    const stored: StoredPrompts = {
      v: 1,
      prompts: [
        record('p0', 'failed', { reason: PROMPT_FAIL_REASONS.unconfirmed, decidedAt: AT }),
        record('p1', 'typing'),
        record('p2', 'queued'),
      ],
      older: [],
    };
    const h = harness({ stored, fact: fact('thinking') });
    await h.service.restore([S]);
    const interrupted = await h.until('p1', 'failed');
    expect(interrupted.reason).toBe(PROMPT_FAIL_REASONS.interrupted);
    expect(interrupted.decidedAt).toBeDefined();
    // Pushed once: the new failure, not the one kept from before.
    expect(h.failed.map((r) => r.id)).toEqual(['p1']);
    expect(await h.statusOf('p2')).toBe('queued');
    h.move(fact('awaiting-input'));
    await h.until('p2', 'typing');
    await h.keysAre(['text of p2', '⏎']);
    expect((await h.service.list(S)).map((r) => `${r.id}:${r.status}`)).toEqual(['p0:failed', 'p1:failed', 'p2:typing']);
    // A retry of the interrupted one answers it, and types nothing.
    expect(await h.submit('text of p1', 'p1')).toMatchObject({ created: false, record: { status: 'failed' } });
    await h.keysAre(['text of p2', '⏎']);
  });

  it('a queue kept across a stop is typed in order, once, by the next daemon', async () => {
    const h = harness({ fact: fact('thinking') });
    await h.submit('first', 'p1');
    await h.submit('second', 'p2');
    await h.restart();
    expect((await h.service.list(S)).map((r) => `${r.id}:${r.status}`)).toEqual(['p1:queued', 'p2:queued']);
    h.move(fact('awaiting-input'));
    await h.until('p1', 'typing');
    h.move(fact('thinking'));
    h.say('first');
    await h.until('p1', 'submitted');
    h.move(fact('awaiting-input'));
    await h.until('p2', 'typing');
    await h.keysAre(['first', '⏎', 'second', '⏎']);
  });
});
