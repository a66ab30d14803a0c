/**
 * One session of a `SidecarSystem` as its callers see it (the stream hub: the stream and its
 * snapshots; the sessions service: the pane and its input; status: how snapshots were made), in
 * one handle for the tests that drive the system directly; and such a system started with one
 * session whose pane runs a test's script.
 */
import { SidecarSystem } from '../../src/actors/system.js';
import { silentLogger } from '../../src/log.js';
import type { SnapshotCounts } from '../../src/stream/warm-snapshots.js';
import type { PaneStream } from '../../src/stream/pane-stream.js';
import type { PaneSnapshot } from '../../src/tmux/screen/snapshot.js';
import { eventually, type PrivateTmux } from './tmux.js';

export interface LivePaneView {
  readonly stream: PaneStream;
  readonly paneId: string | null;
  snapshot(): Promise<PaneSnapshot>;
  /** Runs control command lines as input, in order with all input before. */
  run(lines: readonly string[]): Promise<void>;
  counts(): SnapshotCounts;
  /** The stream position the warm capture covers, null when there is none. */
  warmPosition(): number | null;
}

export function livePaneOf(system: SidecarSystem, id: string): LivePaneView {
  const session = system.session(id);
  const source = system.streamOf(id);
  if (!session || !source) throw new Error(`the system has no session ${id}`);
  return {
    stream: source.stream,
    get paneId() {
      return session.input.paneId;
    },
    snapshot: () => source.snapshot(),
    run: (lines) => session.input.runWhenLinked(() => lines, 5000),
    counts: () => {
      const status = system.status().sessions.find((s) => s.id === id);
      if (!status) throw new Error(`session ${id} is gone`);
      return status.snapshots;
    },
    warmPosition: () => system.status().sessions.find((s) => s.id === id)?.warmPosition ?? null,
  };
}

/** How the system of `startLivePane` keeps its stream (ring size; warm snapshots unless false) and its clock (Date.now unless given). */
export interface LivePaneOptions {
  readonly ringBytes: number;
  readonly warmSnapshots?: boolean;
  readonly now?: () => number;
}

/**
 * Starts a system on the private tmux server whose one session `name` runs `sh -c script` in
 * the server's dir, and waits until the session is linked. The caller stops the system; if
 * the start fails, the system is stopped here.
 */
export async function startLivePane(
  tmux: PrivateTmux,
  name: string,
  script: string,
  opts: LivePaneOptions,
): Promise<{ system: SidecarSystem; rt: LivePaneView }> {
  const system = new SidecarSystem({
    cli: tmux.cli,
    target: tmux.target,
    ...opts,
    agent: () => ({ command: ['/bin/sh', '-c', script], env: {}, cwd: tmux.dir }),
    now: opts.now ?? Date.now,
    log: silentLogger,
  });
  try {
    system.start();
    await system.booted();
    await system.createSession(name, 'api');
    await eventually(() => system.status().sessions[0]?.linked === true, 15_000, 25, `the session ${name} to link`);
    return { system, rt: livePaneOf(system, name) };
  } catch (err) {
    await system.stop();
    throw err;
  }
}
