/**
 * The daemon's logger: one JSON line per event in the log file (capped and rotated:
 * log-file.ts), and on stderr either the same JSON (a pipe or a file: for machines) or readable
 * lines (a terminal: for the person who ran `npm start`). `TETHER_LOG_FORMAT=json|pretty`
 * overrides the choice; `TETHER_LOG_LEVEL` sets the level; `TETHER_LOG_MAX_MB` the cap of one
 * log file (docs/configuration.md "Logs").
 *
 * The file is opened only by `openFile`, which the daemon calls once it holds its port and its
 * agent socket: the lines logged before wait in memory (at most MAX_HELD_BYTES) and are written
 * then, so a daemon refused at start writes no log file, creates no data dir and rotates nothing
 * (its refusal is on stderr).
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import pino from 'pino';
import type PinoPretty from 'pino-pretty';
import type { TetherPaths } from '../config/paths.js';
import { CliError } from './fail.js';
import { DEFAULT_LOG_MAX_BYTES, RotatingLogFile } from './log-file.js';

/** What the lines logged before `openFile` may take in memory; later ones reach stderr only. */
const MAX_HELD_BYTES = 1024 * 1024;

/** Bounds of `TETHER_LOG_MAX_MB`. */
const LOG_MAX_MB_MIN = 0.01;
const LOG_MAX_MB_MAX = 1024;

/** The cap of one log file in bytes: `TETHER_LOG_MAX_MB` (MB, decimals allowed), else 10 MB. */
export function logMaxBytes(env: NodeJS.ProcessEnv): number {
  const text = env.TETHER_LOG_MAX_MB;
  if (text === undefined || text.trim() === '') return DEFAULT_LOG_MAX_BYTES;
  const mb = Number(text);
  if (!Number.isFinite(mb) || mb < LOG_MAX_MB_MIN || mb > LOG_MAX_MB_MAX) {
    throw new CliError(
      `TETHER_LOG_MAX_MB: must be a number of MB from ${LOG_MAX_MB_MIN} to ${LOG_MAX_MB_MAX}, got ${JSON.stringify(text.slice(0, 60))}`,
    );
  }
  return Math.round(mb * 1024 * 1024);
}

/**
 * pino-pretty, loaded only for a terminal: a daemon whose stderr is a pipe or a file (a service,
 * a detached start) never needs it. Loaded synchronously (the logger is made synchronously).
 */
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/**
 * pino's error serializer, with the error's type taken from its `name` rather than its class's:
 * the daemon runs bundled with minified class names (scripts/bundle.ts), and every tether
 * error sets its name, as node's own do.
 */
function serializeError(err: Error): pino.SerializedError {
  const out = pino.stdSerializers.err(err);
  if (err instanceof Error) out.type = err.name;
  return out;
}

/** How stderr lines are written. */
export type LogFormat = 'json' | 'pretty';

/** Pretty on a terminal, JSON otherwise, unless the environment says which. */
export function stderrLogFormat(env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): LogFormat {
  const chosen = env.TETHER_LOG_FORMAT;
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return (stderr as { isTTY?: boolean }).isTTY === true ? 'pretty' : 'json';
}

/** The daemon's logger and its file. */
export interface DaemonLogger {
  readonly log: pino.Logger;
  /** Creates the data dir if needed, opens the log file and writes the lines held until now. */
  readonly openFile: () => void;
  /** Closes the file; resolves once it is closed. */
  readonly close: () => Promise<void>;
}

/**
 * stderr and the log file (once `openFile` is called). A line logged after `close` (a late
 * callback) still reaches stderr and is dropped from the file, never thrown. Throws a
 * `CliError` for a bad `TETHER_LOG_MAX_MB`.
 */
export function makeLogger(paths: TetherPaths, env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): DaemonLogger {
  const level = env.TETHER_LOG_LEVEL ?? 'info';
  const maxBytes = logMaxBytes(env);
  let file: RotatingLogFile | null = null;
  let held: string[] = [];
  let heldBytes = 0;
  let open = true;
  // The lines of the last turn reach the file even when the process ends on an error.
  const flushOnExit = () => file?.flush();
  const toFile = {
    write: (line: string) => {
      if (!open) return true;
      if (file) return file.write(line);
      if (heldBytes + line.length <= MAX_HELD_BYTES) {
        held.push(line);
        heldBytes += line.length;
      }
      return true;
    },
  };
  const toStderr =
    stderrLogFormat(env, stderr) === 'pretty'
      ? loadPretty()({
          destination: stderr,
          sync: true,
          colorize: (stderr as { isTTY?: boolean }).isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : stderr;
  const log = pino(
    { level, serializers: { err: serializeError } },
    pino.multistream([
      { stream: toStderr, level },
      { stream: toFile, level },
    ]),
  );
  return {
    log,
    openFile: () => {
      if (file || !open) return;
      mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
      file = new RotatingLogFile(paths.logFile, maxBytes);
      process.once('exit', flushOnExit);
      for (const line of held) file.write(line);
      held = [];
      heldBytes = 0;
    },
    close: () => {
      open = false;
      held = [];
      process.off('exit', flushOnExit);
      file?.close();
      return Promise.resolve();
    },
  };
}
