/**
 * Reads the config (docs/configuration.md): `config.toml`, else a legacy
 * `config.json` beside it (with a warning), else all defaults; then the `TETHER_*` overrides.
 * The checks of what was read are in validate.ts, their words in problems.ts.
 *
 * Invariant: whatever is wrong (unreadable file, syntax, unknown key, bad value, bad
 * variable) ends as one `ConfigError` whose message is one line naming the file or variable,
 * the key, and what is expected; a config that loads is complete and valid.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { TetherPaths } from './paths.js';
import { ConfigError } from './config-error.js';
import { expectedOf, quote } from './problems.js';
import { tryParseBindAddress, type BindAddress, type TetherConfig } from './schema.js';
import { applyEnvOverrides, validateConfig, type ConfigChecks } from './validate.js';

/** Largest config file read; anything bigger is not a config file. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** What `loadConfig` found: the config, the file it came from (null: defaults) and warnings. */
export interface LoadedConfig {
  config: TetherConfig;
  source: string | null;
  warnings: string[];
}

/** Splits a bind address into host (no brackets) and port; throws a ConfigError when invalid. */
export function parseBindAddress(s: string): BindAddress {
  const parsed = tryParseBindAddress(s);
  if (parsed === null) throw new ConfigError(null, 'bindAddress', `bindAddress must be ${expectedOf(['bindAddress'])}, got ${quote(s)}`);
  return parsed;
}

/** Loads the config for `paths`, applying the environment's overrides. */
export async function loadConfig(
  paths: Pick<TetherPaths, 'configFile' | 'legacyConfigFile'>,
  env: NodeJS.ProcessEnv,
  checks: ConfigChecks = {},
): Promise<LoadedConfig> {
  const warnings: string[] = [];
  let source: string | null = paths.configFile;
  let text = await readText(paths.configFile);
  if (text !== null) {
    if (paths.legacyConfigFile !== paths.configFile && (await exists(paths.legacyConfigFile))) {
      warnings.push(`${paths.legacyConfigFile} is ignored because ${paths.configFile} exists: delete it`);
    }
  } else {
    text = await readText(paths.legacyConfigFile);
    source = text === null ? null : paths.legacyConfigFile;
  }
  let raw: unknown = {};
  if (source !== null && text !== null) {
    const json = path.extname(source).toLowerCase() === '.json';
    if (json)
      warnings.push(`${source}: JSON config is deprecated: move its settings to ${tomlPathFor(paths.configFile)} (TOML, same keys)`);
    raw = json ? parseJsonText(text, source) : parseTomlText(text, source);
  }
  const config = applyEnvOverrides(validateConfig(raw, source ?? 'defaults', checks), env);
  return { config, source, warnings };
}

/** The file's text, or null when it does not exist. */
async function readText(file: string): Promise<string | null> {
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (info.isFile() && info.size > MAX_CONFIG_FILE_BYTES) {
      throw new ConfigError(file, null, `is larger than ${MAX_CONFIG_FILE_BYTES} bytes: not a config file`);
    }
    bytes = await readFile(file);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new ConfigError(file, null, `cannot be read (${code ?? (err as Error).message})`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ConfigError(file, null, 'is not valid UTF-8 text');
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function parseTomlText(text: string, file: string): unknown {
  try {
    return parseToml(text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const reason = (err.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
    throw new ConfigError(file, null, `TOML syntax error on line ${err.line}, column ${err.column}: ${reason}`, err.line);
  }
}

function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = (err as Error).message;
    const at = /at position (\d+)/.exec(reason);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : null;
    throw new ConfigError(file, null, `JSON syntax error${line === null ? '' : ` on line ${line}`}: ${reason}`, line);
  }
}

/** The TOML file a JSON config should move to: the configured one, or config.toml beside it. */
function tomlPathFor(configFile: string): string {
  return path.extname(configFile).toLowerCase() === '.json' ? path.join(path.dirname(configFile), 'config.toml') : configFile;
}
