/**
 * What tether keeps in tmux (docs/architecture.md "What tether keeps in tmux"): the name of every
 * user option it sets on or reads from a session, the shape of a pane id, and the marking of a
 * pane's session as tether's. Their one home: no other module of src/ spells an option's name or
 * a pane-id pattern (test/unit/tmux-layout.test.ts); a module that needs one takes it from here.
 *
 * Invariant: tether writes nothing in tmux but these options, and only on its own sessions (a
 * session an agent registers from becomes one first); never a global option. This module runs
 * nothing itself and imports no tmux code, so the hook programs and pi's extension can load it.
 */
import { SESSION_NAME_RULE, isValidSessionName } from '../protocol/session-name.js';

/** tether's user options of a session, by what each holds (the docs' table says who writes and reads it). */
export const SESSION_OPTIONS = {
  /** When tether made or adopted the session (`Date.toISOString`): its presence marks the session as tether's. */
  created: '@created',
  /** The pane tether mirrors (a pane id); a session without it, or whose pane is gone, mirrors its first pane. */
  pane: '@tether-pane',
  /** The stream position reserved so far: a later run's positions start above it. */
  seq: '@tether-seq',
  /** The session's title, set by PATCH, automatic naming or a restore. */
  description: '@description',
  /** Who set the title: `manual` (PATCH) or `auto` (automatic naming, which never overrides `manual`). */
  descriptionSource: '@description-source',
  /** The project the session was created for. */
  project: '@project',
  /** The directory the agent started in, exactly (formats rewrite control characters). */
  cwd: '@tether-cwd',
  /** The configured agent it runs (`default` for `[agent]`, or an `[agents.<name>]`). */
  agent: '@tether-agent',
  /** The git worktree the session was made in (`SessionWorktree` as JSON). */
  worktree: '@tether-worktree',
  /** The continue scheduled for when the agent's usage limit resets (JSON). */
  continue: '@tether-continue',
  /** The session's queued and decided prompts (JSON). */
  prompts: '@tether-prompts',
} as const;

/** The name of one of tether's session options. */
export type SessionOption = (typeof SESSION_OPTIONS)[keyof typeof SESSION_OPTIONS];

/** The shape of a user option's name tether reads or writes (tmux user options start with `@`). */
export const OPTION_NAME_RE = /^@[a-z-]+$/;

/** A tmux pane id: `%` and a number, unique on its server only. */
export const PANE_ID_RE = /^%\d+$/;

/** A process id as tmux prints it (`#{pid}`, `$TMUX`'s second field); null for anything else. */
export function parsePid(text: string): number | null {
  return /^[1-9]\d{0,9}$/.test(text) ? Number(text) : null;
}

/** The format that expands to an option's value (empty when unset). */
export const optionFormat = (option: SessionOption): string => `#{${option}}`;

/** The format that expands to `1` when the option is set, `0` when not. */
export const optionSetFormat = (option: SessionOption): string => `#{?${option},1,0}`;

/** What tmux says of a pane: its server's socket, the pane itself, its session, and whether that is tether's. */
export interface PanePlace {
  readonly socket: string;
  /** The server's pid; null when tmux did not say. */
  readonly serverPid: number | null;
  /** Empty when tmux has no such pane (tmux 3.3a answers with empty fields instead of failing). */
  readonly pane: string;
  readonly session: string;
  readonly tether: boolean;
}

/** Where an agent in a pane is served: its session, or why it cannot be (one sentence a person can act on). */
export type PaneLocation = { readonly session: string } | { readonly refused: string };

/** What a new window prints when tether makes a session: its pane, and the session's identity. */
export const SESSION_MADE_FORMAT = '#{pane_id} #{pid} #{session_id} #{session_created}';
const SESSION_MADE_RE = /^(%\d+) (\d+) (\$\d+) (\d+)$/;

/** What `SESSION_MADE_FORMAT` printed, from a command list's whole output; null when no line is one. */
export function parseSessionMade(out: string): { paneId: string; serverPid: string; sessionId: string; created: number } | null {
  for (const line of out.split('\n')) {
    const m = SESSION_MADE_RE.exec(line);
    if (m) return { paneId: m[1]!, serverPid: m[2]!, sessionId: m[3]!, created: Number(m[4]) };
  }
  return null;
}

/** Separates the fields of PANE_PLACE_FORMAT (a session name cannot hold it). */
const SEP = '\x1f';
const PANE_PLACE_FORMAT = ['#{socket_path}', '#{pane_id}', '#{session_name}', optionSetFormat(SESSION_OPTIONS.created), '#{pid}'].join(SEP);

/** The command that asks tmux where `pane` is; `parsePanePlace` reads its answer. */
export const panePlaceCommand = (pane: string): string[] => ['display-message', '-p', '-t', pane, PANE_PLACE_FORMAT];

/** What `panePlaceCommand` printed (its newline included or not). */
export function parsePanePlace(out: string): PanePlace {
  const [socket = '', pane = '', session = '', tether, pid = ''] = out.replace(/\n$/, '').split(SEP);
  return { socket, serverPid: parsePid(pid), pane, session, tether: tether === '1' };
}

/**
 * Makes the session of `place` tether's unless it is one: `@created` (now) and the pane as the
 * one it mirrors, so the daemon adopts it at its next scan. `run` runs one tmux command on the
 * pane's server. A session whose name tether cannot use is refused, with the same sentence
 * wherever a pane is placed (the daemon's agent hub, `pi --tether`).
 */
export async function markPaneSession(
  place: PanePlace,
  run: (command: readonly string[]) => Promise<unknown>,
  createdAt: string,
): Promise<PaneLocation> {
  const { session, pane } = place;
  if (!isValidSessionName(session)) {
    return {
      refused: `the tmux session name "${session.slice(0, 64)}" cannot be a tether session (${SESSION_NAME_RULE}): rename it with tmux rename-session`,
    };
  }
  if (!place.tether) {
    // The pane first: a session with `@created` is adopted, and then mirrors `@tether-pane`.
    // Each value follows its option's name, so a pane id or a date is never read as a flag.
    await run(['set-option', '-t', `=${session}:`, SESSION_OPTIONS.pane, pane]);
    await run(['set-option', '-t', `=${session}:`, SESSION_OPTIONS.created, createdAt]);
  }
  return { session };
}

/**
 * A JSON session option's value read back: the value when it parses and `isShape` takes it (its
 * schema's generated check), null when unset, not JSON, or not that shape (set by hand, cut).
 */
export function decodeJsonOption<T>(value: string | null, isShape: (v: unknown) => v is T): T | null {
  if (value === null) return null;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  return isShape(v) ? v : null;
}
