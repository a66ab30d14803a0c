/**
 * What follows a session's events in the daemon (src/service/sessions/session-events.ts), without a daemon:
 * the parts are stand-ins that record what they were asked, and each event is raised by hand.
 */
import { describe, expect, it } from 'vitest';
import { connectSessionEvents, type SessionEventsDeps } from '../../src/service/sessions/session-events.js';

type Listener = (...args: never[]) => unknown;

/** A set of listeners per event name, raised by `emit`. */
function emitter() {
  const listeners = new Map<string, Set<Listener>>();
  const on = (name: string) => (listener: Listener) => {
    const set = listeners.get(name) ?? new Set();
    listeners.set(name, set);
    set.add(listener);
    return () => void set.delete(listener);
  };
  const emit = (name: string, ...args: unknown[]) =>
    [...(listeners.get(name) ?? [])].map((l) => (l as (...a: unknown[]) => unknown)(...args));
  const count = () => [...listeners.values()].reduce((n, s) => n + s.size, 0);
  return { on, emit, count };
}

function parts(opts: { exited?: boolean; hasSession?: boolean } = {}) {
  const calls: string[] = [];
  const e = emitter();
  const call = (what: string) => () => void calls.push(what);
  const deps: SessionEventsDeps = {
    system: {
      onPaneCreated: e.on('pane'),
      onSessionEnded: e.on('ended'),
      onSessionFinal: e.on('final'),
      onAttention: e.on('attention'),
      onMetaChanged: e.on('meta'),
      requestRescan: call('system.requestRescan'),
      metaChanged: (id) => void calls.push(`system.metaChanged ${id}`),
      session: () => ({ exited: opts.exited ?? false }) as ReturnType<SessionEventsDeps['system']['session']>,
      hasSession: () => opts.hasSession ?? false,
      sessionOfPane: () => null,
      queryTmux: () => Promise.reject(new Error('no tmux here')),
    },
    agents: {
      onRegistered: e.on('registered'),
      onDescribed: e.on('described'),
      onConversation: e.on('conversation'),
      notice: (id) => void calls.push(`agents.notice ${id}`),
      sessionSeen: (id) => Promise.resolve(void calls.push(`agents.sessionSeen ${id}`)),
      forget: (id) => void calls.push(`agents.forget ${id}`),
      exited: (id) => void calls.push(`agents.exited ${id}`),
      paneExited: (id) => void calls.push(`agents.paneExited ${id}`),
      locateThrough: (panes) => e.on('locate')(() => panes),
    },
    keeper: {
      note: (id, change) => void calls.push(`keeper.note ${id} ${JSON.stringify(change)}`),
      sync: (id) => Promise.resolve(void calls.push(`keeper.sync ${id}`)),
      forget: (id) => void calls.push(`keeper.forget ${id}`),
    },
    sessions: { onDeleted: e.on('deleted') },
    buffers: {
      attach: (id) => {
        calls.push(`buffers.attach ${id}`);
        return call(`buffers.detach ${id}`);
      },
      delete: (id) => Promise.resolve(void calls.push(`buffers.delete ${id}`)),
    },
    uploads: { sessionDeleted: (id) => void calls.push(`uploads.sessionDeleted ${id}`) },
    livePanes: { added: call('livePanes.added'), removed: call('livePanes.removed') },
    forgets: [{ forget: (id) => void calls.push(`continues.forget ${id}`) }, { forget: (id) => void calls.push(`prompts.forget ${id}`) }],
  };
  return { deps, calls, emit: e.emit, listening: e.count };
}

/** A pane stand-in whose change and notice listeners are raised by hand. */
function pane(id: string) {
  const e = emitter();
  return {
    pane: { id, stream: {}, reservedSeq: 42, onChange: e.on('change'), onNotice: e.on('notice') },
    change: (what: string) => e.emit('change', what),
    notice: (n: unknown) => e.emit('notice', n),
    listening: e.count,
  };
}

describe('what follows a session event', () => {
  it('a pane is buffered and counted; its position is noted; once linked its record is synced and its agent told; gone, all is undone', () => {
    const { deps, calls, emit } = parts();
    connectSessionEvents(deps);
    const p = pane('s1');
    const [undo] = emit('pane', p.pane) as [() => void];
    expect(calls.splice(0)).toEqual(['livePanes.added', 'buffers.attach s1']);
    p.change('output');
    expect(calls.splice(0)).toEqual(['keeper.note s1 {"reservedSeq":42}']);
    p.change('linked');
    expect(calls.splice(0)).toEqual(['keeper.sync s1', 'agents.sessionSeen s1']);
    p.notice({ number: 9 });
    expect(calls.splice(0)).toEqual(['agents.notice s1']);
    undo();
    expect(calls.splice(0)).toEqual(['livePanes.removed', 'buffers.detach s1']);
    expect(p.listening()).toBe(0);
  });

  it('an agent that registers makes discovery look; a description reaches the clients; a conversation is kept in the record', () => {
    const { deps, calls, emit } = parts();
    connectSessionEvents(deps);
    emit('registered', 's1');
    emit('described', 's1');
    emit('conversation', 's1', { conversation: 'c-1' });
    emit('conversation', 's1', { sessionFile: '/f.jsonl' });
    expect(calls).toEqual([
      'system.requestRescan',
      'system.metaChanged s1',
      'keeper.note s1 {"conversation":"c-1"}',
      'keeper.note s1 {"sessionFile":"/f.jsonl"}',
    ]);
  });

  it('a deleted actor forgets its agent; an exited agent syncs the record; only an ended session loses its record', () => {
    const { deps, calls, emit } = parts();
    connectSessionEvents(deps);
    emit('ended', 's1', 'deleted');
    emit('ended', 's2', 'exited');
    emit('final', 's3', 'ended');
    emit('final', 's4', 'unrestorable');
    expect(calls).toEqual(['agents.forget s1', 'continues.forget s1', 'prompts.forget s1', 'keeper.sync s2', 'keeper.forget s3']);
  });

  it("an agent-exited attention is the agent's exited stop; others are not", () => {
    const { deps, calls, emit } = parts();
    connectSessionEvents(deps);
    emit('attention', 's1', { kind: 'agent-exited', status: 0, signal: null });
    emit('attention', 's1', { kind: 'unrestorable' });
    expect(calls).toEqual(['agents.exited s1']);
  });

  it('a meta change syncs the record, and tells the agents the pane exited only when it did', () => {
    const running = parts();
    connectSessionEvents(running.deps);
    running.emit('meta', 's1');
    expect(running.calls).toEqual(['keeper.sync s1']);
    const exited = parts({ exited: true });
    connectSessionEvents(exited.deps);
    exited.emit('meta', 's1');
    expect(exited.calls).toEqual(['agents.paneExited s1', 'keeper.sync s1']);
  });

  it('a deleted session takes its record and uploads; its buffer only when not kept and no actor is left to delete it', () => {
    const actorless = parts({ hasSession: false });
    connectSessionEvents(actorless.deps);
    actorless.emit('deleted', 's1', false);
    actorless.emit('deleted', 's2', true);
    expect(actorless.calls).toEqual([
      'keeper.forget s1',
      'uploads.sessionDeleted s1',
      'buffers.delete s1',
      'keeper.forget s2',
      'uploads.sessionDeleted s2',
    ]);
    const withActor = parts({ hasSession: true });
    connectSessionEvents(withActor.deps);
    withActor.emit('deleted', 's1', false);
    expect(withActor.calls).toEqual(['keeper.forget s1', 'uploads.sessionDeleted s1']);
  });

  it("agents' panes are placed through the sessions' links (the system)", () => {
    const p = parts();
    const undo = connectSessionEvents(p.deps);
    expect(p.emit('locate')).toEqual([p.deps.system]);
    undo();
    expect(p.emit('locate')).toEqual([]);
  });

  it('the undo removes every listener', () => {
    const { deps, emit, calls, listening } = parts();
    const undo = connectSessionEvents(deps);
    expect(listening()).toBe(10);
    undo();
    expect(listening()).toBe(0);
    emit('registered', 's1');
    expect(calls).toEqual([]);
  });
});

describe('what a deleted session takes with it', () => {
  it("its agent's memory and every part that holds something of it forget it; an agent that exited is no deletion", () => {
    const p = parts();
    const undo = connectSessionEvents(p.deps);
    p.emit('ended', 's1', 'exited');
    expect(p.calls).toEqual(['keeper.sync s1']);
    p.emit('ended', 's1', 'deleted');
    expect(p.calls.slice(1)).toEqual(['agents.forget s1', 'continues.forget s1', 'prompts.forget s1']);
    undo();
  });
});
