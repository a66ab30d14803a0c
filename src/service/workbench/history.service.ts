/**
 * A session's history as the phone reads it back (docs/api.md "History" and "Search"): byte
 * ranges of its disk buffer by stream position, and searches of it. The buffer is flushed
 * first, so what a client got live a moment ago is there too.
 *
 * Invariant: only the buffer files of a known session are read (their paths come from its id
 * alone); a buffer that is not written (its cap reached, the watchdog) is still read, and the
 * answer says so.
 */
import { DomainError } from '../../errors.js';
import { hasControlChar } from '../../protocol/text.js';
import { bufferPaths } from '../../actors/disk-buffer.actor.js';
import { readHistory, type HistoryPage } from '../../history/history-reader.js';
import type { SearchResult } from '../../history/search-scan.js';
import type { SearchRunner } from '../../history/search.js';

/** Most matches one search answers. */
export const MAX_SEARCH_LIMIT = 500;
/** Matches a search answers when no limit is given. */
export const DEFAULT_SEARCH_LIMIT = 50;
/** Longest search text, in characters. */
export const MAX_QUERY_CHARS = 1024;

/** Whether a session's buffer is being written, and why not. */
export interface BufferNote {
  /** `writing`; `stopped` (the session's cap); `off` (the global cap or low disk); `none` (no live buffer). */
  readonly state: 'writing' | 'stopped' | 'off' | 'none';
  readonly reason: string | null;
}

export interface HistoryDeps {
  readonly buffersDir: string;
  /** The session is known (live, adopted now when tmux holds it, or kept as unrestorable): its buffer may be read. */
  readonly exists: (id: string) => Promise<boolean>;
  /** Writes what waits of the session's buffer. */
  readonly flush: (id: string) => Promise<void>;
  readonly note: (id: string) => BufferNote;
  readonly searches: SearchRunner;
}

export class HistoryService {
  constructor(private readonly deps: HistoryDeps) {}

  private async files(id: string): Promise<{ log: string; idx: string }> {
    if (!(await this.deps.exists(id))) throw new DomainError('session-not-found', `no session named "${id}"`);
    return bufferPaths(this.deps.buffersDir, id);
  }

  /** Positions `[from, to)` (to the end when `to` is null), at most 8 MiB of them. */
  async history(id: string, from: number, to: number | null): Promise<HistoryPage & { buffer: BufferNote }> {
    const files = await this.files(id);
    if (to !== null && to <= from) throw new DomainError('invalid', `must be above from (${from}), got ${to}`, { field: 'querystring/to' });
    await this.deps.flush(id).catch(() => undefined);
    return { ...(await readHistory(files, from, to)), buffer: this.deps.note(id) };
  }

  /** Lines of the history that contain `query`, newest first. */
  async search(id: string, query: string, limit: number): Promise<SearchResult & { buffer: BufferNote }> {
    const files = await this.files(id);
    if (query.trim() === '') throw new DomainError('invalid', 'must not be empty', { field: 'querystring/q' });
    if (hasControlChar(query)) throw new DomainError('invalid', 'must not contain control characters', { field: 'querystring/q' });
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
      throw new DomainError('invalid', `must be an integer from 1 to ${MAX_SEARCH_LIMIT}`, { field: 'querystring/limit' });
    await this.deps.flush(id).catch(() => undefined);
    return { ...(await this.deps.searches.search(files, query, limit)), buffer: this.deps.note(id) };
  }
}
