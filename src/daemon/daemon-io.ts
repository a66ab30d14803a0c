/**
 * What `runDaemon` (daemon/root.ts) is given, the process's world and the tests' seams (read by
 * `tether serve`: src/cli/test-seams.ts), and what it gives back.
 */
import type { ServedRoute, ServerOptions } from '../transport/server.js';
import type { PushWiring } from './push.js';

export interface DaemonIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
  /** Free bytes on the file system of `dir` (statfs by default; tests inject a full disk). */
  readonly freeBytes?: (dir: string) => Promise<number>;
  /** The clock of the disk buffers' idle cleanup (tests move it days ahead). */
  readonly bufferClock?: () => number;
  /** The uploads' clock: when an upload is stored, and the keep-days clean-up's now (tests move it days ahead). */
  readonly uploadsClock?: () => number;
  /** How often unrestorable sessions are checked again (RESTORE_RETRY_INTERVAL_MS; tests shorten it). */
  readonly restoreRetryMs?: number;
  /** The connection limits (tests shorten them). */ readonly peerLimits?: ServerOptions['peerLimits'];
  /** The Live Activity's delays (tests shorten them: src/cli/test-seams.ts). */
  readonly activityDelays?: PushWiring['activityDelays'];
}

export interface RunningDaemon {
  readonly url: string;
  /** The server's route table (for the security suite: every route must need a token). */
  readonly routes: readonly ServedRoute[];
  stop(): Promise<void>;
}
