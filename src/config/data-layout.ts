/**
 * The layout of the data dir (docs/configuration.md "Files"): the name of every file and folder
 * tether keeps under it, and under its run dir, auth dir and TLS dir. Their one home: no other
 * module spells one of these names (test/unit/data-layout.test.ts); a module that needs a path
 * takes it from here or from `resolvePaths` (src/config/paths.ts), which builds on these names.
 */
import { join } from 'node:path';

/** The data dir's own files and folders. */
export const DATA_DIR_NAMES = {
  /** Disk buffers, one `<session id>.log` each. */
  buffers: 'buffers',
  /** TLS material: TLS_DIR_NAMES. */
  tls: 'tls',
  /** Hashed tokens and devices: AUTH_DIR_NAMES. */
  auth: 'auth',
  /** Run-time sockets and files: RUN_DIR_NAMES. */
  run: 'run',
  /** The daemon's log file. */
  log: 'tether.log',
  /** One record per session, to restore it (`<session id>.json`). */
  sessions: 'sessions',
  /** Uploaded files, when `uploads.dir` is not set. */
  uploads: 'uploads',
  /** What the uploads hold, to clean them up. */
  uploadLedger: 'uploads.json',
  /** Made worktrees, when `worktrees.dir` is not set. */
  worktrees: 'worktrees',
  /** Every answer to an agent's question, one line each. */
  answersLog: 'answers.log',
  /** The daemon's id, made once. */
  identity: 'identity.json',
  /** Files tether writes for the agents it starts, each named by its agent's adapter (the core names no agent). */
  agents: 'agents',
} as const;

/** Files in the auth dir. */
export const AUTH_DIR_NAMES = {
  tokens: 'tokens.json',
  /** Taken while one process changes the tokens. */
  tokensLock: 'tokens.json.lock',
  /** The CLI's own token, in plain text (0600). */
  localToken: 'local-token',
} as const;

/** Files in the TLS dir. */
export const TLS_DIR_NAMES = { cert: 'cert.pem', key: 'key.pem' } as const;

/** Files in the run dir. */
export const RUN_DIR_NAMES = {
  /** The socket agents and their hooks report on. */
  agentSocket: 'agent.sock',
  /** The running daemon's pid, port and fingerprint. */
  daemonFile: 'daemon.json',
  /** The tmux control clients the daemon started, retired by the next one. */
  controlLedger: 'control-clients',
  /** What a detached daemon printed before its log file was open. */
  daemonOut: 'serve.out',
  /** What a launchd service printed. */
  serviceOut: 'service.out',
} as const;

/** Where uploads go: the configured `uploads.dir`, else the data dir's uploads folder. */
export function uploadsRoot(configured: string, dataDir: string): string {
  return configured === '' ? join(dataDir, DATA_DIR_NAMES.uploads) : configured;
}

/** Where made worktrees go: the configured `worktrees.dir`, else the data dir's worktrees folder. */
export function worktreesRoot(configured: string, dataDir: string): string {
  return configured === '' ? join(dataDir, DATA_DIR_NAMES.worktrees) : configured;
}
