/**
 * Input to a pane: tether's key names (decisions.md "HTTP": input) and literal bytes.
 *
 * Invariant: literal text never meets tmux's key-name lookup or command parser; it travels as
 * `send-keys -H` hex. Named keys go as tmux key names so tmux applies the pane's modes (cursor
 * key mode, keypad mode) the way a real terminal would.
 */
import { TmuxArgumentError, buildControlCommand } from './quote.js';

/** A resolved key: a tmux key name, or exact bytes to write. */
export type ResolvedKey = { readonly kind: 'tmux'; readonly key: string } | { readonly kind: 'bytes'; readonly bytes: Buffer };

/** Most bytes per `send-keys -H` line by default (each byte is three characters on the line). */
export const SEND_KEYS_MAX_BYTES = 2048;

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Tether key name (lower case) -> tmux key name. */
const TMUX_KEYS: ReadonlyMap<string, string> = new Map<string, string>([
  ['escape', 'Escape'],
  ['tab', 'Tab'],
  ['shift-tab', 'BTab'],
  ['enter', 'Enter'],
  ['backspace', 'BSpace'],
  ['delete', 'DC'],
  ['insert', 'IC'],
  ['space', 'Space'],
  ['up', 'Up'],
  ['down', 'Down'],
  ['left', 'Left'],
  ['right', 'Right'],
  ['home', 'Home'],
  ['end', 'End'],
  ['pageup', 'PPage'],
  ['pagedown', 'NPage'],
  ...Array.from({ length: 12 }, (_, i): [string, string] => [`f${i + 1}`, `F${i + 1}`]),
  ...Array.from(LETTERS, (c): [string, string] => [`ctrl-${c}`, `C-${c}`]),
  ['ctrl-space', 'C-Space'],
  ['ctrl-left', 'C-Left'],
  ['ctrl-right', 'C-Right'],
]);

/** Every key name tether accepts, for docs and error messages; `alt-<char>` stands for any one character. */
export const KEY_NAMES: readonly string[] = [...TMUX_KEYS.keys(), 'alt-<char>'];

/** Looks a key name up (case-insensitive; the character of `alt-<char>` keeps its case); null when unknown. */
export function resolveKey(name: string): ResolvedKey | null {
  const lower = name.toLowerCase();
  const tmuxKey = TMUX_KEYS.get(lower);
  if (tmuxKey !== undefined) return { kind: 'tmux', key: tmuxKey };
  if (!lower.startsWith('alt-')) return null;
  const rest = name.slice(4);
  // Exactly one code point, and a whole one: a lone surrogate has no UTF-8 form.
  const cp = rest.codePointAt(0);
  if (cp === undefined || [...rest].length !== 1 || (cp >= 0xd800 && cp <= 0xdfff)) return null;
  // Alt as a terminal sends it (meta sends escape): ESC, then the character.
  return { kind: 'bytes', bytes: Buffer.concat([Buffer.from([0x1b]), Buffer.from(rest, 'utf8')]) };
}

function checkPaneId(paneId: string): void {
  if (!/^%\d+$/.test(paneId)) throw new TmuxArgumentError('a pane id looks like %<number>');
}

/** `send-keys -H` lines writing `bytes` to the pane exactly (NUL included), in order, chunked. */
export function sendKeysHexCommands(paneId: string, bytes: Buffer, maxBytesPerCommand = SEND_KEYS_MAX_BYTES): string[] {
  checkPaneId(paneId);
  if (!Number.isInteger(maxBytesPerCommand) || maxBytesPerCommand < 1)
    throw new RangeError('maxBytesPerCommand must be a positive integer');
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += maxBytesPerCommand) {
    const chunk = bytes.subarray(at, at + maxBytesPerCommand);
    // Two hex digits per byte, space-separated; built directly since hex needs no quoting.
    const hex = chunk.toString('hex').replace(/(..)(?!$)/g, '$1 ');
    lines.push(`send-keys -t ${paneId} -H ${hex}`);
  }
  return lines;
}

/** The control-mode lines that deliver one resolved key to the pane. */
export function sendKeyCommands(paneId: string, key: ResolvedKey): string[] {
  checkPaneId(paneId);
  if (key.kind === 'bytes') return sendKeysHexCommands(paneId, key.bytes);
  return [buildControlCommand(['send-keys', '-t', paneId, key.key])];
}
