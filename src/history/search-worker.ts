/**
 * The worker thread one search runs in (search.ts starts it): the reading and matching of a
 * large buffer never holds up the daemon's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { BufferFiles } from './history-reader.js';
import { searchBuffer } from './search-scan.js';

const { files, query, limit } = workerData as { files: BufferFiles; query: string; limit: number };
searchBuffer(files, query, limit).then(
  (result) => parentPort?.postMessage({ ok: true, result }),
  (err: unknown) => parentPort?.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) }),
);
