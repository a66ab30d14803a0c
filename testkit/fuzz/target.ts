/**
 * The daemon under fuzzing as the fuzzer sees it (where it listens, its tokens, its route table,
 * the sessions it must keep), and the ledger of what the fuzzer's requests were promised: the
 * sessions the daemon said it created and deleted, the input it said it took and refused.
 *
 * Invariant: every expectation is written down when the daemon answers, and checked once at the
 * end against what tmux and the pane actually hold: an answer that lied shows there.
 */
import { randomBytes } from 'node:crypto';
import type { Peer } from './raw-http.js';

/** One route of the server's table (src/transport/server.ts `ServedRoute`). */
export interface FuzzRoute {
  readonly method: string;
  readonly url: string;
  readonly websocket: boolean;
  readonly auth: string;
  readonly schema?: { readonly body?: unknown; readonly querystring?: unknown; readonly params?: unknown };
}

export interface FuzzTarget {
  readonly peer: Peer;
  /** The Host header a client would send. */
  readonly host: string;
  /** A valid bearer token. */
  readonly token: string;
  /** Tokens that must not let anyone in: a wrong one, a revoked one, a pairing token. */
  readonly badTokens: readonly string[];
  /** The server's own route table: every route in it is fuzzed. */
  readonly routes: readonly FuzzRoute[];
  /** The sessions input may go to; never deleted by the fuzzer. */
  readonly live: readonly string[];
  /** A git repository of the fuzzer's: a live session works in it, and sessions are asked for worktrees of it. */
  readonly repo: {
    readonly dir: string;
    /** The live session started in `dir`. */
    readonly session: string;
    /** The paths its changes must list. */
    readonly changes: readonly string[];
  };
  /** The folder the canaries would write to. */
  readonly canaryDir: string;
  /** Where uploads may be stored (the daemon's data dir): an upload's path must lie under it. */
  readonly uploadsRoot: string;
  /** A fresh pairing token, as `tether pair` makes one. */
  newPairingToken(): string;
  /** Failures the daemon raised that nothing caught (an in-process daemon's uncaught errors), drained. */
  crashes(): string[];
  /**
   * The daemon's error log lines since the last call. Checked with `/health`, not per case: a
   * request's line is written as its answer leaves, so it may come after the case was judged.
   */
  errorLog(): string[];
}

/** What the fuzzer was told, to be checked against tmux and the pane at the end. */
export class FuzzLedger {
  private readonly run = randomBytes(3).toString('hex');
  private n = 0;
  /** Bytes that must reach the live pane, each under a marker of its own. */
  readonly delivered = new Map<string, Buffer>();
  /** Markers of input that was refused: they must never reach the pane. */
  readonly refused = new Set<string>();
  /** Markers whose fate is not known (the frame's text was mangled on purpose). */
  readonly unknown = new Set<string>();
  /** What each marker's case was, for a finding's report. */
  readonly origin = new Map<string, string>();
  /** The description each session was last given (200), to read back from tmux. */
  readonly descriptions = new Map<string, string>();
  /** Worktrees the daemon said it made and has not yet said it removed (their folders). */
  readonly worktrees = new Set<string>();
  /** Sessions the daemon said it created and has not yet said it deleted. */
  readonly created = new Set<string>();
  /** Cases run per surface, and what they were answered. */
  readonly counts = new Map<string, Map<string, number>>();

  /** A marker no other input carries: ASCII, nothing a terminal or tmux reads specially. */
  marker(): string {
    return `FZ${this.run}x${(this.n++).toString(36)}.`;
  }

  count(surface: string, outcome: string): void {
    const m = this.counts.get(surface) ?? new Map<string, number>();
    m.set(outcome, (m.get(outcome) ?? 0) + 1);
    this.counts.set(surface, m);
  }

  /** Cases per surface, and the outcomes seen, in a line each; then the input the pane was promised. */
  summary(): string {
    const pane = `pane: ${this.delivered.size} inputs taken (each found in the pane), ${this.refused.size} refused (none found), ${this.unknown.size} unknown`;
    return [...this.counts]
      .map(([s, m]) => {
        const total = [...m.values()].reduce((a, b) => a + b, 0);
        const parts = [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}:${v}`);
        return `${s}: ${total} (${parts.join(' ')})`;
      })
      .concat(pane)
      .join('\n');
  }
}

/** Bytes as text a person can read in a report (JSON.stringify hands a Buffer over as `{type, data}`). */
function readable(_k: string, v: unknown): unknown {
  const bytes =
    (v as { type?: unknown; data?: unknown } | null)?.type === 'Buffer'
      ? Buffer.from((v as { data: number[] }).data)
      : v instanceof Uint8Array
        ? Buffer.from(v)
        : null;
  return bytes ? JSON.stringify(bytes.toString('latin1').slice(0, 600)) : v;
}

/** A failed expectation: what was sent and what came back, for the shrunk counterexample. */
export class FuzzFinding extends Error {
  constructor(what: string, evidence: Record<string, unknown>) {
    super(`${what}\n${JSON.stringify(evidence, readable, 2).slice(0, 4000)}`);
    this.name = 'FuzzFinding';
  }
}
