/**
 * The daemon's logger: one JSON line per event in the log file, and on stderr either the same
 * JSON (a pipe or a file: for machines) or readable lines (a terminal: for the person who ran
 * `npm start`). `TETHER_LOG_FORMAT=json|pretty` overrides the choice; `TETHER_LOG_LEVEL` sets
 * the level (docs/configuration.md "Logs").
 */
import { mkdirSync } from 'node:fs';
import pino from 'pino';
import pretty from 'pino-pretty';
import type { TetherPaths } from '../config/paths.js';

/** How stderr lines are written. */
export type LogFormat = 'json' | 'pretty';

/** Pretty on a terminal, JSON otherwise, unless the environment says which. */
export function stderrLogFormat(env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): LogFormat {
  const chosen = env.TETHER_LOG_FORMAT;
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return (stderr as { isTTY?: boolean }).isTTY === true ? 'pretty' : 'json';
}

/**
 * stderr and the log file. `close` flushes and closes the file and resolves once it is closed;
 * a line logged after it (a late callback) still reaches stderr and is dropped from the file,
 * never thrown.
 */
export function makeLogger(
  paths: TetherPaths,
  env: NodeJS.ProcessEnv,
  stderr: NodeJS.WritableStream,
): { log: pino.Logger; close: () => Promise<void> } {
  mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
  const level = env.TETHER_LOG_LEVEL ?? 'info';
  const file = pino.destination({ dest: paths.logFile, mkdir: true, sync: false, mode: 0o600 });
  let open = true;
  const closed = new Promise<void>((resolve) => {
    file.once('close', resolve);
    file.once('error', () => resolve());
  });
  const toFile = { write: (line: string) => (open ? file.write(line) : true) };
  const toStderr =
    stderrLogFormat(env, stderr) === 'pretty'
      ? pretty({
          destination: stderr,
          sync: true,
          colorize: (stderr as { isTTY?: boolean }).isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : stderr;
  const log = pino(
    { level },
    pino.multistream([
      { stream: toStderr, level },
      { stream: toFile, level },
    ]),
  );
  return {
    log,
    close: () => {
      if (!open) return closed;
      open = false;
      try {
        file.flushSync();
      } catch {
        // Not open yet, or the disk refused: the file is closed all the same.
      }
      file.end();
      return closed;
    },
  };
}
