/**
 * Which tmux server tether talks to: the binary plus the socket arguments. Config's
 * `[tmux] socket` names a server (`-L name`); a value with a slash is a socket path (`-S path`),
 * which is what tests use for a private server. Empty means the user's default server (docs/contract.md "An SSH user notices nothing").
 */
export interface TmuxTarget {
  /** The tmux executable, resolved on PATH by default. */
  readonly bin: string;
  /** `[]`, `['-L', name]` or `['-S', path]`; always placed before the command. */
  readonly socketArgs: readonly string[];
}

/** Builds a target from the config's socket value. */
export function tmuxTarget(socket: string, bin = 'tmux'): TmuxTarget {
  if (socket === '') return { bin, socketArgs: [] };
  return { bin, socketArgs: socket.includes('/') ? ['-S', socket] : ['-L', socket] };
}
