/**
 * Runs searches of session histories in worker threads (search-worker.ts), at most
 * MAX_PARALLEL_SEARCHES at once; the rest wait their turn, at most MAX_WAITING_SEARCHES of them.
 *
 * Invariant: the daemon's event loop never reads or matches a buffer; a worker that fails or
 * runs past SEARCH_TIMEOUT_MS is ended and its search refused, never left running.
 */
import { Worker } from 'node:worker_threads';
import type { BufferFiles } from './history-reader.js';
import type { SearchResult } from './search-scan.js';

/** Searches that run at once (the machine's cores are shared with tmux and the agents). */
export const MAX_PARALLEL_SEARCHES = 2;
/** Searches that may wait for a turn; more are refused as busy. */
export const MAX_WAITING_SEARCHES = 16;
/** A search that takes longer is ended. */
export const SEARCH_TIMEOUT_MS = 30_000;
/** Heap of a search worker, in MB: a block and its text, never the whole buffer. */
const WORKER_HEAP_MB = 96;

/** A search could not run now (too many waiting) or failed; the message says which. */
export class SearchUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchUnavailableError';
  }
}

export class SearchRunner {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  /**
   * `execArgv`: the worker's node flags (by default the process's own); a benchmark run under a
   * TypeScript loader gives none, so its worker starts as the daemon's does, on built code.
   */
  constructor(
    private readonly workerUrl: URL = new URL('./search-worker.js', import.meta.url),
    private readonly execArgv?: string[],
  ) {}

  /** Searches a buffer in a worker; waits for a free turn first. */
  async search(files: BufferFiles, query: string, limit: number): Promise<SearchResult> {
    if (this.running >= MAX_PARALLEL_SEARCHES) {
      if (this.waiting.length >= MAX_WAITING_SEARCHES) throw new SearchUnavailableError('too many searches are running; try again shortly');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return await this.inWorker(files, query, limit);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private inWorker(files: BufferFiles, query: string, limit: number): Promise<SearchResult> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(this.workerUrl, {
        workerData: { files, query, limit },
        ...(this.execArgv ? { execArgv: this.execArgv } : {}),
        resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      });
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(new SearchUnavailableError(`the search took longer than ${SEARCH_TIMEOUT_MS / 1000} s and was stopped`));
      }, SEARCH_TIMEOUT_MS);
      worker.once('message', (msg: { ok: true; result: SearchResult } | { ok: false; message: string }) => {
        clearTimeout(timer);
        void worker.terminate();
        if (msg.ok) resolve(msg.result);
        else reject(new SearchUnavailableError(`the search failed: ${msg.message}`));
      });
      worker.once('error', (err) => {
        clearTimeout(timer);
        reject(new SearchUnavailableError(`the search failed: ${err.message}`));
      });
    });
  }
}
