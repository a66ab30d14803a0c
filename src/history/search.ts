/**
 * Runs searches of session histories in worker threads (search-worker.ts), at most
 * MAX_PARALLEL_SEARCHES at once; the rest wait their turn, at most MAX_WAITING_SEARCHES of them.
 *
 * A worker that answered is kept for the next search for a while (WORKER_IDLE_MS), unreferenced.
 *
 * Invariant: the daemon's event loop never reads or matches a buffer; a worker that fails or
 * runs past SEARCH_TIMEOUT_MS is ended and its search refused, never left running or reused.
 */
import { Worker } from 'node:worker_threads';
import { DomainError } from '../errors.js';
import type { BufferFiles } from './history-reader.js';
import type { SearchResult } from './search-scan.js';

/** Searches that run at once (the machine's cores are shared with tmux and the agents). */
export const MAX_PARALLEL_SEARCHES = 2;
/** Searches that may wait for a turn; more are refused as busy. */
export const MAX_WAITING_SEARCHES = 16;
/** A search that takes longer is ended. */
export const SEARCH_TIMEOUT_MS = 30_000;
/**
 * How long a worker that answered waits for the next search: starting one costs more CPU than
 * folding 20 MB, and a warm one has its code compiled.
 */
const WORKER_IDLE_MS = 60_000;
/** Heap of a search worker, in MB: a block and its text, never the whole buffer. */
const WORKER_HEAP_MB = 96;

/** A search could not run now (too many waiting) or failed: `search-unavailable`; the message says which. */
const unavailable = (message: string): DomainError => new DomainError('search-unavailable', message);

export class SearchRunner {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Workers that answered and wait for the next search (at most MAX_PARALLEL_SEARCHES). */
  private readonly idle: Worker[] = [];
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();

  /**
   * `execArgv`: the worker's node flags (by default the process's own); a benchmark run under a
   * TypeScript loader gives none, so its worker starts as the daemon's does, on built code.
   * The worker's path goes through `../history/` because this code also runs bundled into
   * dist/cli/main.js (scripts/bundle.ts), beside which the worker is not.
   */
  constructor(
    private readonly workerUrl: URL = new URL('../history/search-worker.js', import.meta.url),
    private readonly execArgv?: string[],
  ) {}

  /** Searches a buffer in a worker; waits for a free turn first. */
  async search(files: BufferFiles, query: string, limit: number): Promise<SearchResult> {
    if (this.running >= MAX_PARALLEL_SEARCHES) {
      if (this.waiting.length >= MAX_WAITING_SEARCHES) throw unavailable('too many searches are running; try again shortly');
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
      const worker = this.idle.pop() ?? this.startWorker();
      clearTimeout(this.idleTimers.get(worker));
      worker.ref();
      const finish = (keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (keep) this.putAway(worker);
        else void worker.terminate();
      };
      const timer = setTimeout(() => {
        finish(false);
        reject(unavailable(`the search took longer than ${SEARCH_TIMEOUT_MS / 1000} s and was stopped`));
      }, SEARCH_TIMEOUT_MS);
      const onMessage = (msg: { ok: true; result: SearchResult } | { ok: false; message: string }) => {
        finish(msg.ok);
        if (msg.ok) resolve(msg.result);
        else reject(unavailable(`the search failed: ${msg.message}`));
      };
      const onError = (err: Error) => {
        finish(false);
        reject(unavailable(`the search failed: ${err.message}`));
      };
      const onExit = (code: number) => onError(new Error(`its worker stopped (exit code ${code})`));
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ files, query, limit });
    });
  }

  private startWorker(): Worker {
    const worker = new Worker(this.workerUrl, {
      ...(this.execArgv ? { execArgv: this.execArgv } : {}),
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    // A busy worker's failure is its search's (inWorker); an idle one that fails is dropped.
    const drop = () => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
    };
    worker.on('error', drop).on('exit', drop);
    return worker;
  }

  /** Keeps a worker that answered for the next search, for WORKER_IDLE_MS; it never holds the process up. */
  private putAway(worker: Worker): void {
    worker.unref();
    this.idle.push(worker);
    // Its 'exit' takes it out of `idle`.
    const timer = setTimeout(() => void worker.terminate(), WORKER_IDLE_MS);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }
}
