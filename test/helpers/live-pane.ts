/**
 * One session of a `SidecarSystem` as its callers see it (the stream hub: the stream and its
 * snapshots; the sessions service: the pane and its input; status: how snapshots were made), in
 * one handle for the tests that drive the system directly.
 */
import type { SidecarSystem } from '../../src/actors/system.js';
import type { SnapshotCounts } from '../../src/stream/warm-snapshots.js';
import type { PaneStream } from '../../src/stream/pane-stream.js';
import type { PaneSnapshot } from '../../src/tmux/snapshot.js';

export interface LivePaneView {
  readonly stream: PaneStream;
  readonly paneId: string | null;
  snapshot(): Promise<PaneSnapshot>;
  /** Runs control command lines as input, in order with all input before. */
  run(lines: readonly string[]): Promise<void>;
  counts(): SnapshotCounts;
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
  };
}
