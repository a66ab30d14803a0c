/**
 * The phone's workbench, wired (docs/api.md "Uploads", "History", "Search"): the upload store
 * with its ledger and its clean-up, the history and search services over the disk buffers, and
 * their routes. Part of the composition root: it only connects parts made elsewhere.
 *
 * Invariant: making it touches no file; the clean-up starts with `start`, which the daemon calls
 * once it holds its port (a refused daemon removes nothing).
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DiskBuffers } from '../actors/disk-buffer.actor.js';
import type { SidecarSystem } from '../actors/system.js';
import type { TetherConfig } from '../config/schema.js';
import { SearchRunner } from '../history/search.js';
import type { Logger } from '../log.js';
import type { InputMessage } from '../protocol/input.js';
import { HistoryService, type BufferNote } from '../service/history.service.js';
import { UploadsService } from '../service/uploads.service.js';
import { historyRoutes } from '../transport/history.routes.js';
import { uploadsRoutes } from '../transport/uploads.routes.js';
import { UploadLedger } from '../uploads/upload-ledger.js';
import { UploadStore } from '../uploads/upload-store.js';
import { DATA_DIR_NAMES, uploadsRoot } from '../config/data-layout.js';

/** How often uploads older than `[uploads] keep_days` are looked for (and once at `start`). */
export const UPLOAD_CLEANUP_INTERVAL_MS = 6 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

export interface WorkbenchDeps {
  readonly config: TetherConfig;
  readonly dataDir: string;
  readonly buffersDir: string;
  readonly system: SidecarSystem;
  readonly buffers: DiskBuffers;
  /** A session kept as unrestorable (its buffer may still be read). */
  readonly isUnrestorable: (id: string) => boolean;
  readonly input: (id: string, message: InputMessage) => Promise<void>;
  /** The uploads' clock: when an upload is stored, and the keep-days clean-up's now. */
  readonly now: () => number;
  readonly log: Logger;
}

export interface Workbench {
  readonly plugins: readonly ((app: FastifyInstance) => Promise<void>)[];
  /** The session was deleted: its uploads go with it. */
  readonly sessionDeleted: (id: string) => void;
  /** Runs the uploads clean-up now and every UPLOAD_CLEANUP_INTERVAL_MS (once the daemon holds its port). */
  readonly start: () => void;
  readonly stop: () => void;
}

function bufferNote(buffers: DiskBuffers, id: string): BufferNote {
  const own = buffers.sessionState(id);
  const global = buffers.status();
  if (global.state === 'off') return { state: 'off', reason: global.reason };
  if (own === 'stopped') return { state: 'stopped', reason: `the session's disk buffer reached session_cap_mb: later output was not kept` };
  if (own === null) return { state: 'none', reason: 'the session has no live disk buffer: what is answered is what was kept' };
  return { state: 'writing', reason: null };
}

export function makeWorkbench(deps: WorkbenchDeps): Workbench {
  const { config, system, buffers, log } = deps;
  const store = new UploadStore({
    root: uploadsRoot(config.uploads.dir, deps.dataDir),
    maxBytes: config.uploads.max_mb * 1024 * 1024,
    ledger: new UploadLedger(join(deps.dataDir, DATA_DIR_NAMES.uploadLedger), log),
    now: deps.now,
  });
  const uploads = new UploadsService({
    store,
    sessionState: async (id) => {
      // A session tmux holds but discovery has not adopted yet is adopted now, not refused.
      const s = (await system.knows(id)) ? system.session(id) : null;
      return s ? (s.exited ? 'exited' : 'running') : null;
    },
    input: deps.input,
  });
  const history = new HistoryService({
    buffersDir: deps.buffersDir,
    exists: async (id) => deps.isUnrestorable(id) || (await system.knows(id)),
    flush: (id) => buffers.flushSession(id),
    note: (id) => bufferNote(buffers, id),
    searches: new SearchRunner(),
  });
  const cleanup = () =>
    void store.cleanup(deps.now() - config.uploads.keep_days * DAY_MS).then(
      (removed) => removed.length > 0 && log.info({ removed: removed.length }, 'uploads older than keep_days removed'),
      (err: Error) => log.warn({ err: err.message }, 'the uploads clean-up failed'),
    );
  let timer: NodeJS.Timeout | null = null;
  return {
    plugins: [
      async (app) => void (await app.register(uploadsRoutes, { uploads })),
      async (app) => void (await app.register(historyRoutes, { history })),
    ],
    sessionDeleted: (id) =>
      void uploads.removeSession(id).then(
        (removed) => removed.length > 0 && log.info({ session: id, removed: removed.length }, "the deleted session's uploads were removed"),
        (err: Error) => log.warn({ session: id, err: err.message }, 'the uploads of a deleted session could not be removed'),
      ),
    start: () => {
      if (timer) return;
      cleanup();
      timer = setInterval(cleanup, UPLOAD_CLEANUP_INTERVAL_MS);
      timer.unref();
    },
    stop: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
