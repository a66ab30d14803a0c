/**
 * Codex's approvals as they happen, session by session (asks.ts says what Codex writes): its state
 * notice `blocked` (kind `permission`) opens an ask, once its rollout file was read for the call
 * it is about; its state leaving `blocked` ends it (the answer was taken: tether's, or the
 * terminal's). The approval notice (OSC 9) before it names the command.
 *
 * A session's first `idle` state (Codex writes it at start-up, before any prompt) makes Codex
 * there, idle: nothing else says so before its first turn ends. It need not be the first state
 * Codex writes: it also writes `state=clear`, and a turn it starts by itself is `working` first.
 *
 * Invariant: at most one approval is open per session; an ask is reported only while Codex still
 * waits (a state that left `blocked` while the rollout file was read reports nothing).
 */
import type { AdapterRuntime, TerminalNotice } from '../contract/adapter.js';
import { approvalCommand, codexApproval, CODEX_NOTIFY_OSC, CODEX_STATE_OSC, readCodexState } from './asks.js';
import type { CodexRolloutWatch } from './rollout-watch.js';

/** How long an approval notice names the command of the `blocked` state that follows it. */
const NOTICE_FRESH_MS = 10_000;

export interface CodexApprovalsDeps extends Pick<AdapterRuntime, 'report' | 'now' | 'log'> {
  readonly rollouts: Pick<CodexRolloutWatch, 'lookNow' | 'lastCall'>;
}

export class CodexApprovals {
  /** Sessions whose Codex waits on an approval (its state is `blocked`). */
  private readonly blocked = new Set<string>();
  /** Sessions whose Codex wrote `idle` since the daemon began watching. */
  private readonly idleSeen = new Set<string>();
  /** The command of each session's last approval notice, and when it came. */
  private readonly named = new Map<string, { command: string; at: number }>();

  constructor(private readonly deps: CodexApprovalsDeps) {}

  notice(session: string, notice: TerminalNotice): void {
    if (notice.code === CODEX_NOTIFY_OSC) {
      const command = approvalCommand(notice.text);
      if (command !== null) this.named.set(session, { command, at: this.deps.now() });
      return;
    }
    if (notice.code !== CODEX_STATE_OSC) return;
    const state = readCodexState(notice.text);
    if (state.app !== undefined && state.app !== 'codex') return;
    this.deps.log.debug({ session, state: state.state ?? null }, "Codex's state");
    if (state.state === 'idle' && !this.idleSeen.has(session)) {
      this.idleSeen.add(session);
      // Its first `idle`: Codex is up and waits for a prompt (it reports nothing else before its
      // first turn ends). An empty report makes it there, idle; an agent that reported is not moved.
      this.deps.report(session, { events: [] });
    }
    if (state.state === 'blocked') {
      if (this.blocked.has(session)) return;
      this.blocked.add(session);
      void this.open(session);
    } else if (state.state !== undefined && this.blocked.delete(session)) {
      // Codex went on: the approval was answered (here, or at the terminal).
      this.deps.report(session, { events: [], askEnded: { why: 'terminal' } });
    }
  }

  /** Reads the rollout file (the call the approval is about), then opens the ask while Codex still waits. */
  private async open(session: string): Promise<void> {
    await this.deps.rollouts.lookNow();
    if (!this.blocked.has(session)) return;
    const named = this.named.get(session);
    const command = named && this.deps.now() - named.at <= NOTICE_FRESH_MS ? named.command : null;
    this.deps.report(session, { events: [], ask: codexApproval(command, this.deps.rollouts.lastCall(session)) });
  }

  forget(session: string): void {
    this.idleSeen.delete(session);
    this.blocked.delete(session);
    this.named.delete(session);
  }
}
