/**
 * The events of tmux's control mode as tether types them: one per line or block the parser
 * (src/tmux/control/control-codec.ts) reads, and the typing of every notification other than
 * `%output` and `%begin` blocks from its name and arguments.
 */

/** One parsed control-mode line or block; ids are kept as tmux prints them ("%3", "@2", "$1"). */
export type ControlEvent =
  | { type: 'output'; paneId: string; data: Buffer }
  | { type: 'extended-output'; paneId: string; ageMs: number; data: Buffer }
  | { type: 'reply'; ok: boolean; time: number; number: number; flags: number; body: Buffer }
  | { type: 'exit'; reason: string | null }
  | { type: 'sessions-changed' }
  | { type: 'session-changed'; sessionId: string; name: string }
  | { type: 'client-session-changed'; client: string; sessionId: string; name: string }
  | { type: 'window-add' | 'window-close' | 'unlinked-window-add' | 'unlinked-window-close'; windowId: string }
  | { type: 'window-renamed'; windowId: string; name: string }
  | { type: 'session-renamed'; sessionId: string; name: string }
  | { type: 'session-window-changed'; sessionId: string; windowId: string }
  | { type: 'layout-change'; windowId: string; layout: string }
  | { type: 'pause' | 'continue' | 'pane-mode-changed'; paneId: string }
  | { type: 'client-detached'; client: string }
  | { type: 'message'; text: string }
  | { type: 'notification'; name: string; args: string };

/** Splits "first rest..." at the first space; `rest` is '' when there is none. */
function splitFirst(args: string): [string, string] {
  const sp = args.indexOf(' ');
  return sp === -1 ? [args, ''] : [args.slice(0, sp), args.slice(sp + 1)];
}

/** A typed event for a notification other than %output/%begin, or null for the generic one. */
export function typedNotification(name: string, args: string): ControlEvent | null {
  const [first, rest] = splitFirst(args);
  switch (name) {
    case 'exit':
      return { type: 'exit', reason: args === '' ? null : args };
    case 'sessions-changed':
      return { type: 'sessions-changed' };
    case 'session-changed':
      return first.startsWith('$') ? { type: 'session-changed', sessionId: first, name: rest } : null;
    case 'session-renamed':
      return first.startsWith('$') ? { type: 'session-renamed', sessionId: first, name: rest } : null;
    case 'client-session-changed': {
      const [sessionId, sessionName] = splitFirst(rest);
      if (first === '' || !sessionId.startsWith('$')) return null;
      return { type: 'client-session-changed', client: first, sessionId, name: sessionName };
    }
    case 'window-add':
    case 'window-close':
    case 'unlinked-window-add':
    case 'unlinked-window-close':
      return first.startsWith('@') && rest === '' ? { type: name, windowId: first } : null;
    case 'window-renamed':
      return first.startsWith('@') ? { type: 'window-renamed', windowId: first, name: rest } : null;
    case 'session-window-changed': {
      const [windowId] = splitFirst(rest);
      if (!first.startsWith('$') || !windowId.startsWith('@')) return null;
      return { type: 'session-window-changed', sessionId: first, windowId };
    }
    case 'layout-change': {
      const [layout] = splitFirst(rest);
      return first.startsWith('@') && layout !== '' ? { type: 'layout-change', windowId: first, layout } : null;
    }
    case 'pause':
    case 'continue':
    case 'pane-mode-changed':
      return first.startsWith('%') && rest === '' ? { type: name, paneId: first } : null;
    case 'client-detached':
      return first !== '' ? { type: 'client-detached', client: first } : null;
    case 'message':
      return { type: 'message', text: args };
    default:
      return null;
  }
}
