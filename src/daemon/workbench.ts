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
import { HistoryService } from '../service/workbench/history.service.js';
import { bufferNote, hasHistory, uploadTargetState, UploadsUpkeep } from '../service/workbench/workbench-upkeep.js';
import { UploadsService } from '../service/workbench/uploads.service.js';
import { historyRoutes } from '../transport/routes/history.routes.js';
import { uploadsRoutes } from '../transport/routes/uploads.routes.js';
import { UploadLedger } from '../uploads/upload-ledger.js';
import { UploadStore } from '../uploads/upload-store.js';
import { DATA_DIR_NAMES, uploadsRoot } from '../config/data-layout.js';

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
  /** Runs the uploads clean-up now and every UPLOAD_CLEANUP_INTERVAL_MS of workbench-upkeep.ts (once the daemon holds its port). */
  readonly start: () => void;
  readonly stop: () => void;
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
    sessionState: (id) => uploadTargetState(system, id),
    input: deps.input,
  });
  const history = new HistoryService({
    buffersDir: deps.buffersDir,
    exists: (id) => hasHistory(system, deps.isUnrestorable, id),
    flush: (id) => buffers.flushSession(id),
    note: (id) => bufferNote(buffers, id),
    searches: new SearchRunner(),
  });
  const upkeep = new UploadsUpkeep({ store, uploads, keepDays: config.uploads.keep_days, now: deps.now, log });
  return {
    plugins: [
      async (app) => void (await app.register(uploadsRoutes, { uploads })),
      async (app) => void (await app.register(historyRoutes, { history })),
    ],
    sessionDeleted: (id) => upkeep.sessionDeleted(id),
    start: () => upkeep.start(),
    stop: () => upkeep.stop(),
  };
}
