/**
 * The machines mirror the transition tables of docs/contract.md row by row: every row of a table
 * has a transition that names it, and every transition names a row or says it is tether's own.
 * The transitions that name a row must do what the row says: leave the row's state, on the row's
 * event (under the row's condition), and arrive in the row's state (VOCABULARY says how the
 * table's words are named in each machine). The rows are read from the document itself, so the
 * page and the machines cannot drift apart.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMachine, type AnyStateMachine } from 'xstate';
import { loadMachines, transitionsOf, type Row } from '../../scripts/charts.js';
import { deviceMachine } from '../../src/machines/device.machine.js';
import { resumeMachine } from '../../src/machines/resume.machine.js';
import { sessionMachine } from '../../src/machines/session.machine.js';
import { ROOT } from '../helpers/daemon.js';

/** Which machine mirrors which table of docs/contract.md "Transition tables". */
const TABLE_OF_MACHINE: Record<string, string> = {
  session: 'Session lifecycle',
  resume: 'Resume',
  agentState: 'Agent state',
  device: 'Device registration',
  diskBuffer: 'Disk-buffer writing',
  liveActivity: 'Live Activity',
  continueSchedule: 'Scheduled continue',
  prompt: 'Prompt',
  usageWarning: 'Usage warning',
};

/** One row of a table, as written, and its cells. */
interface ContractRow {
  readonly text: string;
  readonly from: string;
  readonly event: string;
  readonly condition: string;
  readonly to: string;
}

/**
 * How each machine names the words of the tables (the one place where they differ). States are
 * state node ids (a row's state is that node or any state inside it); events are event types;
 * a condition is a guard name, `!guard` for the alternative taken when that guard is false, or
 * `@state` when the machine expresses it as a state the transition leaves from.
 * `rows` lists the rows a machine carries out otherwise than word for word, and why.
 * A machine that `forwards` holds none of the table's states: its transitions that name a row
 * take the row's event and hand it to the actor that mirrors the table (whose states are
 * checked there).
 */
interface Vocabulary {
  readonly states?: Readonly<Record<string, readonly string[]>>;
  readonly events: Readonly<Record<string, readonly string[]>>;
  readonly conditions?: Readonly<Record<string, string>>;
  readonly rows?: Readonly<
    Record<string, { readonly from?: readonly string[]; readonly events?: readonly string[]; readonly why: string }>
  >;
  readonly forwards?: true;
}

const VOCABULARY: Record<string, Vocabulary> = {
  session: {
    states: {
      // The actor of a session that ended is removed: `ended` is the table's absent again.
      absent: ['session.absent', 'session.ended'],
      running: ['session.running'],
    },
    events: {
      'POST /sessions': ['session.create'],
      'attach CLI': ['session.create'],
      'DELETE /sessions/:id': ['session.delete'],
      'sidecar restart': ['session.adopt'],
      'POST /sessions/:id/respawn': ['pane.respawn'],
    },
    conditions: {
      // Only the exited pane takes a respawn: the condition is a state, not a guard.
      'the agent exited': '@session.running.pane.exited',
    },
    rows: {
      'running --sidecar restart--> running': {
        from: ['session.absent'],
        why: 'after a restart each session gets a new actor: it starts absent and adopts the session tmux kept running',
      },
    },
  },
  sidecar: {
    forwards: true,
    events: {
      'POST /sessions': ['session.create'],
      'DELETE /sessions/:id': ['session.delete'],
      // The sidecar's first scan finds the sessions tmux kept; it adopts each.
      'sidecar restart': ['tmux.scanned'],
    },
  },
  resume: {
    states: { connected: ['resume.connected'], streaming: ['resume.streaming'] },
    events: { 'resume message': ['client.resume'] },
    conditions: { 'lastSeq within the ring': 'isInRing', 'lastSeq outside the ring': '!isInRing' },
  },
  agentState: {
    // Agent events come only while an agent reports: "any" state is any state of `reporting`.
    states: {
      any: ['agentState.reporting'],
      'awaiting-input': ['agentState.reporting.awaiting-input'],
      asked: ['agentState.reporting.awaiting-input.asked'],
      tool: ['agentState.reporting.tool'],
      thinking: ['agentState.reporting.thinking'],
      'awaiting-input (stopped)': ['agentState.reporting.awaiting-input.stopped'],
      exited: ['agentState.exited'],
      absent: ['agentState.absent'],
    },
    events: {
      'agent_end event': ['agent.end'],
      'the agent stops': ['agent.stop'],
      'the agent asks': ['ask.open'],
      'an answer lands': ['ask.answered'],
      'the ask ends without an answer': ['ask.ended'],
    },
    conditions: {
      'the agent context reports idle': 'isAgentIdle',
      'the choice runs the tool': 'isRunAnswer',
      'the choice makes the agent wait': 'isWaitAnswer',
      'the choice lets the agent go on': 'isResumeAnswer',
      'a usage limit or an API error': 'isApiStop',
      'its process ended': 'isExitStop',
    },
  },
  device: {
    states: { registered: ['device.registered'], removed: ['device.removed'] },
    events: { 'push service reply 410': ['push.unregistered'] },
  },
  liveActivity: {
    states: { none: ['liveActivity.none'], starting: ['liveActivity.starting'], running: ['liveActivity.running'] },
    events: {
      'an agent starts working': ['summary.changed'],
      'update token': ['token.update'],
      // The debounce and the idle while are the machine's named delays.
      'summary changed, debounced': ['xstate.after.debounce.liveActivity.running.content.debouncing'],
      'no agent worked for the idle while': ['xstate.after.idleWhile.liveActivity.running.work.quiet'],
      '410 for the update token': ['push.gone'],
    },
    conditions: { 'the device has a push-to-start token': 'canStart' },
  },
  diskBuffer: {
    states: {
      writing: ['diskBuffer.writing'],
      'stopped for that session': ['diskBuffer.stopped'],
      'off globally': ['diskBuffer.off'],
      // Start-up is judged once, in the state every buffer starts in.
      any: ['diskBuffer.starting'],
      'buffer file deleted': ['diskBuffer.deleted'],
    },
    events: { 'output written': ['output.written'], 'watchdog check': ['watchdog.check'], startup: ['buffer.startup'] },
    conditions: {
      'per-session file reaches its cap': 'isAtSessionCap',
      'total across sessions exceeds the global cap': 'isAtGlobalCap',
      'free disk below the minimum': 'isDiskLow',
      'session inactive for more than 30 days': 'isIdleTooLong',
    },
    rows: {
      'writing --output written [total across sessions exceeds the global cap]--> off globally': {
        events: ['output.written', 'watchdog.check'],
        why: "the watchdog's check also sees a total that another session's output raised",
      },
    },
  },
  continueSchedule: {
    states: {
      none: ['continueSchedule.none'],
      waiting: ['continueSchedule.waiting'],
      typing: ['continueSchedule.typing'],
      typed: ['continueSchedule.typed'],
      skipped: ['continueSchedule.skipped'],
      cancelled: ['continueSchedule.cancelled'],
    },
    events: {
      'POST /sessions/:id/continue': ['continue.schedule'],
      'daemon start': ['continue.restore'],
      'DELETE /sessions/:id/continue': ['continue.cancel'],
      'the agent starts a turn': ['agent.moved-on'],
      'its time comes': ['continue.due'],
      typed: ['continue.typed'],
    },
    conditions: {
      'it was waiting': 'isRestored',
      'too long after, the daemon was down': 'isLate',
      'the agent is still stopped': 'isStillStopped',
      'the agent moved on': '!isStillStopped',
    },
  },
  prompt: {
    states: {
      none: ['prompt.none'],
      queued: ['prompt.queued'],
      typing: ['prompt.typing'],
      typed: ['prompt.typed'],
      submitted: ['prompt.submitted'],
      failed: ['prompt.failed'],
      cancelled: ['prompt.cancelled'],
    },
    events: {
      'POST /sessions/:id/prompt': ['prompt.queue'],
      'daemon start': ['prompt.restore'],
      'DELETE /sessions/:id/prompts/:promptId': ['prompt.cancel'],
      'its turn': ['prompt.turn'],
      'the session ends': ['session.ended'],
      typed: ['prompt.typed'],
      'the keys cannot be typed': ['prompt.untyped'],
      'no report': ['prompt.unconfirmed'],
      'the agent reports it': ['agent.took'],
      'no report in time': ['prompt.timeout'],
    },
    conditions: {
      'it was queued': 'isRestored',
      'it was being typed': 'isRestored',
      'the program reports nothing': '!isReported',
      'the text still in its input box': 'showsText',
    },
  },
  usageWarning: {
    states: { armed: ['usageWarning.armed'], warned: ['usageWarning.warned'] },
    events: { 'a report': ['usage.reported'] },
    conditions: {
      'at or above a threshold': 'isHigher',
      'at or above a higher threshold': 'isHigher',
      'a new period': 'isNewPeriod',
      'a new period, at or above a threshold': 'isNewPeriodReached',
      // The last alternative, taken when none before it was: no new period, no higher threshold.
      'under the next threshold': '!isHigher',
    },
  },
};

const within = (id: string, states: readonly string[]) => states.some((s) => id === s || id.startsWith(`${s}.`));
const word = (what: string, table: Readonly<Record<string, readonly string[]>> | undefined, w: string): readonly string[] => {
  const named = table?.[w];
  if (!named) throw new Error(`VOCABULARY has no ${what} for "${w}"`);
  return named;
};

/**
 * What is wrong with the transitions of `machine` that name the rows of `rows`: each row's
 * transitions must start with one that leaves the row's state on the row's event (under its
 * condition); each other one must continue from where another arrived, on the machine's own
 * event (an invoked actor done or failed, a timer); and each must arrive in the row's state or
 * where another continues. A machine that forwards is checked for the row's event only.
 */
function rowProblems(machine: { id: string }, rows: readonly ContractRow[], vocabulary: Vocabulary): string[] {
  const all = transitionsOf(machine as Parameters<typeof transitionsOf>[0]);
  const problems: string[] = [];
  const show = (t: Row) => `${t.from} --${t.event}${t.guard ? ` [${t.guard}]` : ''}--> ${t.to}`;
  for (const row of rows) {
    const carriers = all.filter((t) => t.rows.includes(row.text));
    if (carriers.length === 0) continue;
    const special = vocabulary.rows?.[row.text];
    const events = special?.events ?? word('event', vocabulary.events, row.event);
    if (vocabulary.forwards) {
      for (const t of carriers)
        if (!events.includes(t.eventType))
          problems.push(`${machine.id}: "${row.text}" is on ${show(t)}, whose event is not ${row.event} (${events.join(', ')})`);
      continue;
    }
    const from = special?.from ?? word('state', vocabulary.states, row.from);
    const to = word('state', vocabulary.states, row.to);
    const condition = row.condition ? vocabulary.conditions?.[row.condition] : undefined;
    if (row.condition && condition === undefined) throw new Error(`VOCABULARY of ${machine.id} has no condition for "${row.condition}"`);
    const guarded = (t: Row): boolean => {
      if (condition === undefined) return true;
      // A condition that is a state: the transition leaves from inside it, unguarded.
      if (condition.startsWith('@')) return t.guard === '' && within(t.source, [condition.slice(1)]);
      if (!condition.startsWith('!')) return t.guard === condition;
      // The alternative taken when the guard is false: unguarded, after the one with the guard.
      const earlier = all.filter((o) => o.source === t.source && o.eventType === t.eventType && o.index < t.index);
      return t.guard === '' && earlier.some((o) => o.guard === condition.slice(1));
    };
    const isEntry = (t: Row) => within(t.source, from) && events.includes(t.eventType) && guarded(t);
    const arrives = new Set(carriers.flatMap((t) => t.targets));
    const continuesFrom = new Set(carriers.filter((t) => !isEntry(t)).map((t) => t.source));
    if (!carriers.some(isEntry))
      problems.push(
        `${machine.id}: "${row.text}": no transition naming it leaves ${row.from} (${from.join(', ')}) on ${row.event} (${events.join(', ')})${condition ? ` under ${condition}` : ''}; it is on ${carriers.map(show).join('; ')}`,
      );
    for (const t of carriers) {
      if (!isEntry(t) && !(arrives.has(t.source) && t.eventType.startsWith('xstate.')))
        problems.push(
          `${machine.id}: "${row.text}" is on ${show(t)}, which neither leaves ${row.from} on ${row.event} nor continues a transition of the row`,
        );
      const arrivesRight = t.targets.length > 0 && t.targets.every((x) => within(x, to) || continuesFrom.has(x));
      if (!arrivesRight)
        problems.push(`${machine.id}: "${row.text}" is on ${show(t)}, which does not arrive in ${row.to} (${to.join(', ')})`);
    }
  }
  return problems;
}

/**
 * The rows of each table under "## Transition tables", as `from --event [condition]--> to`
 * (the condition in brackets only when there is one).
 */
function contractTables(markdown: string): Map<string, ContractRow[]> {
  const section = markdown.split(/^## Transition tables$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/contract.md has no "## Transition tables" section');
  const tables = new Map<string, ContractRow[]>();
  let current: ContractRow[] | null = null;
  for (const line of section.split('\n')) {
    const heading = /^### (.+)$/.exec(line);
    if (heading) tables.set(heading[1]!, (current = []));
    if (!current || !line.startsWith('|') || /^\|\s*(From|---)/.test(line)) continue;
    const [from = '', event = '', condition = '', to = ''] = line
      .split('|')
      .slice(1)
      .map((c) => c.trim());
    current.push({ text: `${from} --${event}${condition ? ` [${condition}]` : ''}--> ${to}`, from, event, condition, to });
  }
  return tables;
}

const CONTRACT = readFileSync(join(ROOT, 'docs/contract.md'), 'utf8');
const TABLES = contractTables(CONTRACT);
const TABLE_ROWS: Record<string, ContractRow[]> = Object.fromEntries(
  Object.entries(TABLE_OF_MACHINE).map(([id, table]) => [id, TABLES.get(table) ?? []]),
);
const ROWS: Record<string, string[]> = Object.fromEntries(Object.entries(TABLE_ROWS).map(([id, rows]) => [id, rows.map((r) => r.text)]));
const EVERY_ROW = Object.values(TABLE_ROWS).flat();

/** Machines that mirror no table of their own: every transition is tether's own or names another table's row. */
const NO_TABLE = new Set(['streamClient', 'sidecar']);

describe('docs/contract.md transition tables and the machines', async () => {
  const machines = await loadMachines();

  it('every file in src/machines is loaded (charted and checked here without being listed anywhere)', () => {
    const files = readdirSync(join(ROOT, 'src/machines')).filter((f) => f.endsWith('.machine.ts'));
    expect(new Set(machines.map((m) => m.file))).toEqual(new Set(files.map((f) => `src/machines/${f}`)));
  });

  it('the page has every table a machine mirrors, each with rows', () => {
    for (const [id, table] of Object.entries(TABLE_OF_MACHINE))
      expect(TABLES.get(table)?.length ?? 0, `${id}: table "${table}"`).toBeGreaterThan(0);
    expect([...TABLES.keys()].sort()).toEqual(Object.values(TABLE_OF_MACHINE).sort());
  });

  it('every machine mirrors a table or is declared as having none', () => {
    for (const { machine } of machines)
      expect(
        machine.id in ROWS || NO_TABLE.has(machine.id),
        `machine ${machine.id}: add its table to TABLE_OF_MACHINE or its id to NO_TABLE`,
      ).toBe(true);
  });

  for (const [id, rows] of Object.entries(ROWS)) {
    it(`${id}: every row of its table has a transition`, () => {
      const m = machines.find((x) => x.machine.id === id);
      expect(m, `machine ${id}`).toBeDefined();
      const named = new Set(transitionsOf(m!.machine).flatMap((t) => t.rows));
      for (const row of rows) expect(named, row).toContain(row);
    });
  }

  it("every transition of every machine names a contract row or is marked as tether's own", () => {
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) {
        expect(t.rows.length > 0 || t.tethersOwn, `${machine.id}: ${t.from} --${t.event}--> ${t.to}`).toBe(true);
      }
    }
  });

  it('every named row is one of the rows of docs/contract.md (no typos)', () => {
    const known = new Set(Object.values(ROWS).flat());
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) for (const s of t.rows) expect(known, `${machine.id}: ${s}`).toContain(s);
    }
  });

  it("every transition that names a row leaves the row's state on the row's event (under its condition) and arrives in the row's state", () => {
    for (const { machine } of machines) {
      if (!transitionsOf(machine).some((t) => t.rows.length > 0)) continue;
      const vocabulary = VOCABULARY[machine.id];
      expect(vocabulary, `machine ${machine.id} names rows: add how it names the tables' words to VOCABULARY`).toBeDefined();
      expect(rowProblems(machine, EVERY_ROW, vocabulary!)).toEqual([]);
    }
  });
});

/** A copy of a machine's config (functions shared), changed by `edit`, as a machine of its own. */
function editedMachine(machine: AnyStateMachine, edit: (config: Config) => void): { id: string } {
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(copy);
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)]));
    return value;
  };
  const config = copy(machine.config) as Config;
  edit(config);
  return createMachine(config as Parameters<typeof createMachine>[0]);
}
type Config = Record<string, unknown>;
/** The transition config at `path` in a machine config (`['states', 'absent', 'on', 'session.create']`). */
function at(config: Config, path: readonly (string | number)[]): { meta?: unknown } {
  let node: unknown = config;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  if (node === null || typeof node !== 'object') throw new Error(`no transition at ${path.join('.')}`);
  return node;
}

describe('the row check fails for a row on the wrong transition', () => {
  const check = (machine: { id: string }) => rowProblems(machine, EVERY_ROW, VOCABULARY[machine.id]!);
  const DELETE_ROW = 'running --DELETE /sessions/:id--> absent';
  const POST_ROW = 'absent --POST /sessions--> running';

  it('passes the machines as they are', () => {
    for (const m of [sessionMachine, resumeMachine, deviceMachine]) expect(check(m)).toEqual([]);
  });

  it("a row moved to a transition that arrives elsewhere (a failed delete's)", () => {
    const moved = editedMachine(sessionMachine, (c) => {
      at(c, ['states', 'deleting', 'invoke', 'onError']).meta = at(c, ['states', 'deleting', 'invoke', 'onDone']).meta;
      at(c, ['states', 'deleting', 'invoke', 'onDone']).meta = { row: 'tether' };
    });
    expect(check(moved)).toEqual([
      `session: "${DELETE_ROW}" is on deleting --error: delete--> running, which does not arrive in absent (session.absent, session.ended)`,
    ]);
  });

  it('a row moved to a transition on another event, from the same state', () => {
    const moved = editedMachine(sessionMachine, (c) => {
      at(c, ['states', 'absent', 'on', 'session.adopt']).meta = { row: [POST_ROW] };
      at(c, ['states', 'absent', 'on', 'session.create']).meta = { row: ['absent --attach CLI--> running'] };
    });
    const problems = check(moved);
    expect(problems).toContain(
      `session: "${POST_ROW}": no transition naming it leaves absent (session.absent, session.ended) on POST /sessions (session.create); it is on absent --session.adopt--> running; creating --done: create--> running`,
    );
    expect(problems).toContain(
      `session: "${POST_ROW}" is on creating --done: create--> running, which neither leaves absent on POST /sessions nor continues a transition of the row`,
    );
  });

  it("a row moved to the other alternative of its event (the condition's opposite)", () => {
    const within = 'connected --resume message [lastSeq within the ring]--> streaming';
    const outside = 'connected --resume message [lastSeq outside the ring]--> streaming';
    const swapped = editedMachine(resumeMachine, (c) => {
      at(c, ['states', 'connected', 'on', 'client.resume', 0]).meta = { row: outside };
      at(c, ['states', 'connected', 'on', 'client.resume', 1]).meta = { row: within };
    });
    const problems = check(swapped);
    expect(
      problems.some((p) => p.startsWith(`resume: "${within}": no transition naming it leaves connected`) && p.includes('under isInRing')),
    ).toBe(true);
    expect(
      problems.some((p) => p.startsWith(`resume: "${outside}": no transition naming it leaves connected`) && p.includes('under !isInRing')),
    ).toBe(true);
  });

  it('a row moved to a transition from another state', () => {
    const moved = editedMachine(deviceMachine, (c) => {
      at(c, ['states', 'removed', 'on', 'device.register']).meta = at(c, ['states', 'registered', 'on', 'push.unregistered']).meta;
      at(c, ['states', 'registered', 'on', 'push.unregistered']).meta = { row: 'tether' };
    });
    const row = 'registered --push service reply 410--> removed';
    expect(check(moved)).toEqual([
      `device: "${row}": no transition naming it leaves registered (device.registered) on push service reply 410 (push.unregistered); it is on removed --device.register--> registered`,
      `device: "${row}" is on removed --device.register--> registered, which neither leaves registered on push service reply 410 nor continues a transition of the row`,
      `device: "${row}" is on removed --device.register--> registered, which does not arrive in removed (device.removed)`,
    ]);
  });
});
