/**
 * Where tether keeps its files (docs/configuration.md): the config file, and the
 * data dir with the disk buffers, TLS material, tokens, the log file and run-time sockets.
 *
 * Invariant: `resolvePaths` is a pure function of the environment it is given (plus the
 * platform and, only when the environment names no home directory, the OS user's home).
 * env-paths cannot be used for that: it reads `process.env` and `os.homedir()` once, when it
 * is first imported, so it would ignore the `env` argument and any later change to it. The
 * rules below are env-paths 3's for `envPaths('tether', {suffix: ''})`, applied to the given
 * environment (test/unit/config.test.ts checks that both agree on the real environment), with
 * one refinement from the XDG spec: a relative `XDG_*_HOME` is ignored.
 */
import { homedir as osHomedir } from 'node:os';
import path from 'node:path';
import { DATA_DIR_NAMES } from './data-layout.js';

/** The product's directory name under the platform's config and data roots. */
const APP_NAME = 'tether';

/** Every file and directory tether uses; all paths are absolute. */
export interface TetherPaths {
  /** The TOML config file: `<config dir>/config.toml`, or `TETHER_CONFIG`. */
  readonly configFile: string;
  /** The legacy JSON config, read only when `configFile` does not exist: `config.json` beside it. */
  readonly legacyConfigFile: string;
  /** The data dir: `<data root>/tether`, or `TETHER_DATA_DIR`. */
  readonly dataDir: string;
  /** Disk buffers, one `<session id>.log` each. */
  readonly buffersDir: string;
  /** `cert.pem` and `key.pem`. */
  readonly tlsDir: string;
  /** Hashed tokens and devices (files mode 0600). */
  readonly authDir: string;
  /** The daemon's log file. */
  readonly logFile: string;
  /** Run-time sockets and the pid file. */
  readonly runDir: string;
}

/** A variable's value when it is set to something non-empty (env-paths treats "" as unset). */
function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** The home directory as the environment names it, else the OS user's. */
function homeOf(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  return nonEmpty(env, platform === 'win32' ? 'USERPROFILE' : 'HOME') ?? osHomedir();
}

/** An `XDG_*_HOME` value; the XDG spec says to ignore relative ones. */
function xdgHome(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = nonEmpty(env, name);
  return v !== undefined && path.isAbsolute(v) ? v : undefined;
}

/** The platform's config and data dirs for tether, with env-paths 3's rules. */
function platformDirs(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): { config: string; data: string } {
  const home = homeOf(env, platform);
  if (platform === 'darwin') {
    const library = path.join(home, 'Library');
    return { config: path.join(library, 'Preferences', APP_NAME), data: path.join(library, 'Application Support', APP_NAME) };
  }
  if (platform === 'win32') {
    const appData = nonEmpty(env, 'APPDATA') ?? path.join(home, 'AppData', 'Roaming');
    const localAppData = nonEmpty(env, 'LOCALAPPDATA') ?? path.join(home, 'AppData', 'Local');
    return { config: path.join(appData, APP_NAME, 'Config'), data: path.join(localAppData, APP_NAME, 'Data') };
  }
  return {
    config: path.join(xdgHome(env, 'XDG_CONFIG_HOME') ?? path.join(home, '.config'), APP_NAME),
    data: path.join(xdgHome(env, 'XDG_DATA_HOME') ?? path.join(home, '.local', 'share'), APP_NAME),
  };
}

/**
 * Resolves every path from `env`. `TETHER_CONFIG` (a file) and `TETHER_DATA_DIR` override the
 * platform's locations; relative values are taken from the current directory; empty ones are
 * ignored. `platform` is a parameter so the other platforms' rules can be tested anywhere.
 */
export function resolvePaths(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): TetherPaths {
  const dirs = platformDirs(env, platform);
  const configOverride = nonEmpty(env, 'TETHER_CONFIG');
  const configFile = configOverride === undefined ? path.join(dirs.config, 'config.toml') : path.resolve(configOverride);
  const dataOverride = nonEmpty(env, 'TETHER_DATA_DIR');
  const dataDir = dataOverride === undefined ? dirs.data : path.resolve(dataOverride);
  return {
    configFile,
    legacyConfigFile: path.join(path.dirname(configFile), 'config.json'),
    dataDir,
    buffersDir: path.join(dataDir, DATA_DIR_NAMES.buffers),
    tlsDir: path.join(dataDir, DATA_DIR_NAMES.tls),
    authDir: path.join(dataDir, DATA_DIR_NAMES.auth),
    logFile: path.join(dataDir, DATA_DIR_NAMES.log),
    runDir: path.join(dataDir, DATA_DIR_NAMES.run),
  };
}
