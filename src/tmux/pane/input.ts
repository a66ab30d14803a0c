/**
 * Input to a pane, as tmux control-mode lines: tether's key names (docs/api.md, "Key names"),
 * literal bytes, and pastes. The one place an input message becomes tmux commands.
 *
 * Invariant: literal text never meets tmux's key-name lookup or command parser; it travels as
 * `send-keys -H` hex. Named keys go as tmux key names so tmux applies the pane's modes (cursor
 * key mode, keypad mode) the way a real terminal would.
 */
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../errors.js';
import type { InputMessage } from '../../protocol/input.js';
import { isValidSessionName, SESSION_NAME_RULE } from '../../protocol/session-name.js';
import { PANE_ID_RE } from '../layout.js';
import { tmuxArgumentRefusal, buildControlCommand } from '../quote.js';

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
  if (!PANE_ID_RE.test(paneId)) throw tmuxArgumentRefusal('a pane id looks like %<number>');
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

const PASTE_END = Buffer.from('\x1b[201~', 'latin1');

/** Removes every `ESC[201~`, again until none is left (a removal can join a new one). */
function stripPasteEnd(data: Buffer): Buffer {
  let out = data;
  while (out.includes(PASTE_END)) {
    const parts: Buffer[] = [];
    let at = 0;
    for (let i = out.indexOf(PASTE_END); i !== -1; i = out.indexOf(PASTE_END, at)) {
      parts.push(out.subarray(at, i));
      at = i + PASTE_END.length;
    }
    parts.push(out.subarray(at));
    out = Buffer.concat(parts);
  }
  return out;
}

/**
 * Control-mode lines pasting `data` into the pane through the named buffer: `set-buffer`, then
 * `paste-buffer -p -d` (tmux adds ESC[200~/ESC[201~ only when the application turned bracketed
 * paste on, and deletes the buffer). [] when there is nothing to paste.
 *
 * paste-buffer's default LF -> CR replacement is kept: a real terminal's paste sends CR for a
 * line break, which is what raw-mode programs take as Enter. CRLF is folded to LF first, so a
 * Windows line break is one CR, not two (as VTE and iTerm2 do).
 */
export function pasteCommands(paneId: string, bufferName: string, data: string | Buffer): string[] {
  checkPaneId(paneId);
  // A paste buffer is named by the session-name rule: safe as a bare tmux argument.
  if (!isValidSessionName(bufferName)) throw tmuxArgumentRefusal(`a paste buffer name is ${SESSION_NAME_RULE}`);
  const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (raw.includes(0)) throw tmuxArgumentRefusal('a paste cannot contain a NUL byte');
  const text = Buffer.from(stripPasteEnd(raw).toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
  if (text.length === 0) return [];
  return [
    // "--": the data is never read as flags, even when it starts with "-".
    buildControlCommand(['set-buffer', '-b', bufferName, '--', text]),
    buildControlCommand(['paste-buffer', '-p', '-d', '-b', bufferName, '-t', paneId]),
  ];
}

/**
 * The control-mode lines that deliver one input message to the pane, in order; throws
 * `DomainError('unknown-key')` for a key name tether does not know.
 */
export function inputCommands(paneId: string, message: InputMessage): string[] {
  switch (message.type) {
    case 'key': {
      const key = resolveKey(message.name);
      if (!key) throw new DomainError('unknown-key', `unknown key name "${message.name.slice(0, 32)}"`, { field: 'name' });
      return sendKeyCommands(paneId, key);
    }
    case 'keys':
      return sendKeysHexCommands(paneId, Buffer.from(message.data, 'utf8'));
    case 'paste':
      return pasteCommands(paneId, `tether-paste-${randomBytes(6).toString('hex')}`, message.data);
  }
}
