/**
 * Where the agent socket is (docs/agents.md "The agent socket"): in the run dir, or, when that
 * path is too long for a Unix socket, a short one in the temp dir.
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_DIR_NAMES } from '../../config/data-layout.js';

/** The Unix socket path limit (sun_path) with room for the NUL, on Linux and macOS alike. */
export const MAX_SOCKET_PATH_BYTES = 103;
/**
 * The agent socket in a run dir; when that path is too long for a Unix socket, a short one in
 * the temp dir named after the user and the run dir (the server makes its directory 0700 and
 * refuses one it does not own).
 */
export function agentSocketPath(runDir: string): string {
  const path = join(runDir, RUN_DIR_NAMES.agentSocket);
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES) return path;
  const digest = createHash('sha256').update(runDir).digest('hex').slice(0, 16);
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return join(tmpdir(), `tether-${uid}-${digest}`, RUN_DIR_NAMES.agentSocket);
}

/** The events the extension reports (names as the agent-state machine takes them). */
