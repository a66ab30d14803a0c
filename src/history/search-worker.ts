/**
 * The worker thread searches run in (search.ts starts it and hands it one search at a time):
 * the reading and matching of a large buffer never holds up the daemon's event loop.
 */
import { parentPort } from 'node:worker_threads';
import type { BufferFiles } from './history-reader.js';
import { searchBuffer } from './search-scan.js';

parentPort?.on('message', ({ files, query, limit }: { files: BufferFiles; query: string; limit: number }) => {
  searchBuffer(files, query, limit).then(
    (result) => parentPort?.postMessage({ ok: true, result }),
    (err: unknown) => parentPort?.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) }),
  );
});
