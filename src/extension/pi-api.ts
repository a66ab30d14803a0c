/**
 * The part of pi's extension API the tether extension uses, as structural types, so the
 * extension works with any pi that has them (`@mariozechner/pi-coding-agent` 0.73 and the newer
 * `@earendil-works/pi-coding-agent`) without importing either at run time. Also where the
 * running pi comes from, to know whether it has the `agent_settled` event (pi >= 0.80.4).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface PiUi {
  notify(message: string, type?: 'info' | 'warning' | 'error'): void;
  setStatus?(key: string, text: string | undefined): void;
}

/** The context pi passes to every handler. */
export interface PiContext {
  readonly hasUI: boolean;
  readonly cwd: string;
  readonly ui: PiUi;
  isIdle(): boolean;
  hasPendingMessages(): boolean;
  /** Where pi keeps the conversation (absent in pi versions without it). */
  readonly sessionManager?: { getSessionFile?(): string | undefined };
}

export interface PiCommandInfo {
  readonly name: string;
  readonly description?: string;
  readonly source: string;
  /** An argument schema (pi 0.73 has none; passed on when an agent reports one). */
  readonly args?: unknown;
}

/** What the factory receives. Events are typed loosely: their shapes differ across versions. */
export interface PiApi {
  on(event: string, handler: (event: PiEvent, ctx: PiContext) => unknown): unknown;
  registerFlag(name: string, options: { description?: string; type: 'boolean' | 'string'; default?: boolean | string }): void;
  getFlag(name: string): boolean | string | undefined;
  getCommands?(): PiCommandInfo[];
}

/** An event as pi hands it over; only `type` is certain. */
export interface PiEvent {
  readonly type?: string;
  readonly [key: string]: unknown;
}

/**
 * `after_provider_response` (pi 0.73): one per HTTP response of the model API, before its body
 * is read, with the headers by lowercased name as sent (`"x-codex-primary-used-percent": "57"`).
 * A provider that hides its HTTP responses fires none. Read loosely: `headers` may be anything.
 */
export interface PiProviderResponseEvent extends PiEvent {
  readonly status?: unknown;
  readonly headers?: unknown;
}

/** Agent packages whose `pi` may be running this extension. */
const AGENT_PACKAGES = ['@mariozechner/pi-coding-agent', '@earendil-works/pi-coding-agent'];
/** The first pi release with the `agent_settled` extension event. */
const SETTLED_SINCE = [0, 80, 4] as const;

/** The name and version of the agent package that contains `script` (pi's CLI), or null. */
export function agentPackageOf(script: string | undefined): { name: string; version: string } | null {
  if (!script) return null;
  let dir: string;
  try {
    dir = dirname(realpathSync(script));
  } catch {
    return null;
  }
  for (let depth = 0; depth < 8; depth++) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const m = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
        if (m.name && AGENT_PACKAGES.includes(m.name) && m.version) return { name: m.name, version: m.version };
      } catch {
        // Not readable: keep looking further up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

/** Whether a pi of this version emits `agent_settled`. */
export function hasSettledEvent(version: string): boolean {
  const parts = version.split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    const p = parts[i] ?? 0;
    if (Number.isNaN(p)) return false;
    if (p !== SETTLED_SINCE[i]) return p > SETTLED_SINCE[i]!;
  }
  return true;
}
