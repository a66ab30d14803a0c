/**
 * What the actor system tells the outside world of its sessions: plain data, never a machine's
 * context (src/actors/system.ts hands these out).
 */
import type { PaneInput } from '../stream/live-pane.js';
import type { SnapshotCounts } from '../stream/warm-snapshots.js';

/** A known session: whether its agent has exited (or is being respawned), and its input. */
export interface SessionHandle {
  readonly exited: boolean;
  readonly exitStatus: number | null;
  readonly input: PaneInput;
  /** Its stream's position now, and when the pane last wrote (epoch ms; null when none is known). */
  activity(): { readonly position: number; readonly lastOutputAt: number | null };
  /** Whether the pane's program turned bracketed paste on (followed from its bytes). */
  bracketedPaste(): boolean;
  /** Sets (null: unsets) one of tether's options of the session over its control client, once linked (PaneLink.setOption). */
  setOption(option: string, value: string | null, linkWaitMs: number): Promise<void>;
}

/** One session as the outside world sees it. */
export interface SessionStatus {
  readonly id: string;
  /** `running`, `exited` once the agent pane died (until its agent runs again), `restoring` while it is brought back after its tmux server was lost. */
  readonly state: 'running' | 'exited' | 'starting' | 'restoring';
  readonly linked: boolean;
  readonly paneId: string | null;
  readonly exitStatus: number | null;
  readonly lastError: string | null;
  readonly lastOutputAt: number | null;
  /** How this session's snapshots were made since its actor started. */
  readonly snapshots: SnapshotCounts;
  /** Bytes its warm capture holds, and the stream position it covers (null: none). */
  readonly warmBytes: number;
  readonly warmPosition: number | null;
}

export interface SidecarStatus {
  readonly booted: boolean;
  readonly tmuxProblem: string | null;
  readonly sessions: readonly SessionStatus[];
}
