/**
 * Whether the user turned off Codex's "Approaching rate limits" dialog (docs/agents.md "Codex"):
 * `hide_rate_limit_model_nudge = true` under `[notice]` in `$CODEX_HOME/config.toml` (what the
 * dialog's "never show again" writes), or `-c notice.hide_rate_limit_model_nudge=<bool>` (or
 * `-c notice={hide_rate_limit_model_nudge = <bool>}`) among Codex's arguments, which wins over the
 * file, as in Codex. Codex reads its file when it starts.
 *
 * Invariants: nothing here throws; the file is read asynchronously and at most 1 MiB of it; only a
 * TOML boolean counts.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { codexHomeDir } from './rollout.js';

/** Largest config.toml read. */
const MAX_CONFIG_BYTES = 1024 * 1024;
const KEY = 'hide_rate_limit_model_nudge';

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The setting in a config file's text: true when `[notice]` sets it true. */
export function nudgeHiddenOfConfig(text: string): boolean {
  if (!text.includes(KEY)) return false;
  try {
    const notice = parse(text).notice;
    return isTable(notice) && notice[KEY] === true;
  } catch {
    return false;
  }
}

/** The setting among Codex's arguments (`-c`/`--config key=value`, the last one wins), or null when they do not set it. */
export function nudgeHiddenOfArgs(argv: readonly string[]): boolean | null {
  let found: boolean | null = null;
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] !== '-c' && argv[i] !== '--config') continue;
    const m = /^\s*([^=]+?)\s*=\s*([\s\S]*)$/.exec(argv[i + 1]!);
    if (!m || (m[1] !== `notice.${KEY}` && m[1] !== 'notice')) continue;
    try {
      const value = parse(`v = ${m[2]}`).v;
      const setting = m[1] === 'notice' ? (isTable(value) ? value[KEY] : undefined) : value;
      if (typeof setting === 'boolean') found = setting;
    } catch {
      // Not TOML: Codex takes it as a string, which is no boolean.
    }
  }
  return found;
}

/** The setting in `$CODEX_HOME/config.toml` (`~/.codex/config.toml`) now; false when it cannot be read. */
export async function readNudgeHidden(env: NodeJS.ProcessEnv): Promise<boolean> {
  const fh = await open(join(codexHomeDir(env), 'config.toml'), 'r').catch(() => null);
  if (!fh) return false;
  try {
    const buf = Buffer.alloc(Math.min(MAX_CONFIG_BYTES, (await fh.stat()).size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return nudgeHiddenOfConfig(buf.subarray(0, bytesRead).toString('utf8'));
  } catch {
    return false;
  } finally {
    await fh.close().catch(() => undefined);
  }
}
