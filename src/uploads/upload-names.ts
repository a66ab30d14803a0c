/**
 * The names uploads are stored under (docs/api.md "Uploads"): what is left of a name a client sent
 * once it is safe as a file's base name, and the names tried after it when it is taken.
 *
 * Invariant: a safe name has no folder, no `..`, no control characters and no character a file
 * name or a shell line would trip on, and is at most MAX_NAME_BYTES long, its extension kept.
 */
import { extname } from 'node:path';
import { replaceControlChars } from '../protocol/text.js';

/** Longest stored file name, in UTF-8 bytes (file systems allow 255). */
export const MAX_NAME_BYTES = 120;
/** How many names a store tries (`name-1.png`, `name-2.png`, …) before it gives up. */
export const MAX_NAME_ATTEMPTS = 1000;

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
function cutToBytes(s: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/**
 * The safe base name of a name a client sent: its last path part, control characters and
 * characters a file name or a shell line would trip on removed, leading dots and spaces gone,
 * cut to MAX_NAME_BYTES with its extension kept. Empty when nothing is left.
 */
export function safeUploadName(name: string): string {
  const last = name.split(/[/\\]/).pop() ?? '';
  let clean = replaceControlChars(last.normalize('NFC'))
    .replace(/[<>:"|?*`$'!;&(){}[\]#~^%\s]+/gu, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .replace(/[.-]+$/, '');
  if (Buffer.byteLength(clean) > MAX_NAME_BYTES) {
    const ext = extname(clean);
    const keepExt = Buffer.byteLength(ext) <= 16 ? ext : '';
    clean = cutToBytes(clean.slice(0, clean.length - keepExt.length), MAX_NAME_BYTES - Buffer.byteLength(keepExt)) + keepExt;
  }
  return clean === '.' || clean === '..' ? '' : clean;
}

/** `name-<n>.ext` for the n-th name tried after `name.ext`. */
export function suffixed(name: string, n: number): string {
  if (n === 0) return name;
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem}-${n}${ext && ext !== name ? ext : ''}`;
}
