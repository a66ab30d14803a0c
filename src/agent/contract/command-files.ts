/**
 * Custom slash commands kept as files, as the daemon reads them for `GET /sessions/:id/commands`:
 * a directory of markdown files (Claude Code's and opencode's `commands/*.md`), each named by its
 * file and described by its frontmatter's `description` (else its first line), and the rule for
 * a name an agent's own list may hold. Each adapter says which directories are its own.
 *
 * Invariants: reading is bounded (MAX_COMMAND_FILES per directory, MAX_COMMAND_FILE_BYTES per
 * file); a directory or file that cannot be read is left out, never an error; a name that is not
 * one short word is left out.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_COMMAND_DESCRIPTION_CHARS, MAX_COMMAND_NAME_CHARS } from '../wire/extension-channel.js';
import type { SlashCommand } from './commands.js';

/** Most command files read per directory. */
export const MAX_COMMAND_FILES = 500;
/** Most bytes read of one command file (the frontmatter and first line are at its start). */
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;

/** One word of printable characters, short enough (the protocol's rule for a command name). */
export function isCommandName(name: string): boolean {
  return name !== '' && name.length <= MAX_COMMAND_NAME_CHARS && !/\s/.test(name) && ![...name].some((c) => c.charCodeAt(0) < 0x20);
}

/** A custom command's description as listed: its own, then where it comes from (`(project)`, `(user)`). */
export function scopedDescription(description: string, scope: string): string {
  const own = description.slice(0, MAX_COMMAND_DESCRIPTION_CHARS);
  return own === '' ? `(${scope})` : `${own} (${scope})`;
}

/** The first `max` bytes of a file as text, or null when it cannot be read. */
export async function readFileHead(path: string, max: number): Promise<string | null> {
  try {
    return (await readFile(path)).subarray(0, max).toString('utf8');
  } catch {
    return null;
  }
}

/** A frontmatter value without its quotes. */
function unquote(v: string): string {
  const t = v.trim();
  return (t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")) ? t.slice(1, -1) : t;
}

/**
 * A markdown command file's description and argument hint: the frontmatter's `description` and
 * `argument-hint` (`key: value` lines between `---` lines), else the first non-empty line of the body.
 */
export function readCommandFile(text: string): { description: string; argumentHint?: string } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const meta: Record<string, string> = {};
  let body = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
        if (m) meta[m[1]!] = unquote(m[2]!);
      }
      body = end + 1;
    }
  }
  const first =
    lines
      .slice(body)
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  const description = (meta.description || first.replace(/^#+\s*/, '')).slice(0, MAX_COMMAND_DESCRIPTION_CHARS);
  return { description, ...(meta['argument-hint'] ? { argumentHint: meta['argument-hint'] } : {}) };
}

/**
 * The commands of one directory of markdown command files, by file name; [] when there is none.
 * With `hints`, a file's `argument-hint` becomes the command's `args: { hint }`.
 */
export async function readCommandDir(dir: string, scope: string, hints: boolean): Promise<SlashCommand[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch {
    return [];
  }
  const out: SlashCommand[] = [];
  for (const file of names.slice(0, MAX_COMMAND_FILES)) {
    const name = file.slice(0, -'.md'.length);
    if (!isCommandName(name)) continue;
    const text = await readFileHead(join(dir, file), MAX_COMMAND_FILE_BYTES);
    if (text === null) continue;
    const { description, argumentHint } = readCommandFile(text);
    const args = hints && argumentHint !== undefined ? { args: { hint: argumentHint } } : {};
    out.push({ name, description: scopedDescription(description, scope), ...args });
  }
  return out;
}
