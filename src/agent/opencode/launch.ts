/**
 * opencode with tether (docs/agents.md "opencode"): tether's plugin named in
 * `OPENCODE_CONFIG_CONTENT`, a config layer opencode merges over the user's own (their
 * `opencode.json` files are never edited; plugin lists add up, so their plugins keep running),
 * and a restored session reopening its conversation with `opencode -s <session id>`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LaunchContext } from '../contract/adapter.js';
import { isConversationId } from '../wire/hook-wire.js';

/** The variable opencode reads a config layer from (JSON), merged over the user's files. */
export const CONFIG_CONTENT_ENV = 'OPENCODE_CONFIG_CONTENT';

/** Where tether's plugin is, as opencode's `plugin` list names it. */
export function pluginUrl(ctx: Pick<LaunchContext, 'distDir'>): string {
  return pathToFileURL(join(ctx.distDir, 'agent', 'opencode', 'plugin.js')).href;
}

/**
 * The `OPENCODE_CONFIG_CONTENT` a session's pane gets: the user's own (from the daemon's
 * environment) with tether's plugin added to its `plugin` list; null when theirs is not a plain
 * JSON object (it is left as it is, and the session runs without tether's plugin).
 */
export function configContent(ctx: Pick<LaunchContext, 'distDir'>, env: NodeJS.ProcessEnv): string | null {
  const own = env[CONFIG_CONTENT_ENV];
  let base: Record<string, unknown> = {};
  if (own !== undefined && own.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(own);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
      base = parsed as Record<string, unknown>;
    } catch {
      return null;
    }
  }
  const plugins: unknown[] = Array.isArray(base.plugin) ? (base.plugin as unknown[]) : [];
  const url = pluginUrl(ctx);
  return JSON.stringify({ ...base, plugin: plugins.includes(url) ? plugins : [...plugins, url] });
}

/** opencode's argv, reopening `conversation` when there is one (`-s <id>`). */
export function opencodeArgv(argv: readonly string[], conversation: string | null): string[] {
  return [...argv, ...(conversation !== null && isConversationId(conversation) ? ['-s', conversation] : [])];
}
