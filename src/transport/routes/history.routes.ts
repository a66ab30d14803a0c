/**
 * The history routes (docs/api.md "History", "Search"): a session's past output by stream
 * position, as raw bytes, and searches of it, through a narrow `HistoryHandle`.
 *
 * Invariant: positions and limits arrive as digits only (a query string is text: no sign, no
 * exponent, no fraction), are checked against 2^53 before use, and a range the buffer does not
 * hold is a 416 that names the ranges it does.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DomainError, isDomainError } from '../../errors.js';
import type { PositionRange } from '../../history/buffer-index.js';
import type { HistoryPage } from '../../history/history-reader.js';
import type { SearchResult } from '../../history/search-scan.js';
import type { BufferNote } from '../../service/workbench/history.service.js';
import { DEFAULT_SEARCH_LIMIT } from '../../service/workbench/history.service.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

/** What the routes need of the history. */
export interface HistoryHandle {
  history(id: string, from: number, to: number | null): Promise<HistoryPage & { buffer: BufferNote }>;
  search(id: string, query: string, limit: number): Promise<SearchResult & { buffer: BufferNote }>;
}

const { IdParams, HistoryQuery, SearchQuery } = RouteSchemas;

/** A query-string position as a number, or a 400 naming it. */
function position(value: string, field: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new DomainError('invalid', 'must be a stream position below 2^53', { field: `querystring/${field}` });
  return n;
}

const noteHeaders = (note: BufferNote): Record<string, string> => ({
  'x-tether-buffer': note.state,
  ...(note.reason ? { 'x-tether-buffer-reason': note.reason.replace(/[^\x20-\x7e]/g, '?') } : {}),
});

export const historyRoutes: FastifyPluginAsyncTypebox<{ history: HistoryHandle }> = (app, { history }) => {
  app.get('/sessions/:id/history', { schema: { params: IdParams, querystring: HistoryQuery } }, async (req, reply) => {
    const from = position(req.query.from, 'from');
    const to = req.query.to === undefined ? null : position(req.query.to, 'to');
    try {
      const page = await history.history(req.params.id, from, to);
      return reply
        .code(200)
        .headers({
          'content-type': 'application/octet-stream',
          'cache-control': 'no-store',
          'x-tether-from': String(page.from),
          'x-tether-to': String(page.to),
          ...(page.next !== null ? { 'x-tether-next': String(page.next) } : {}),
          'x-tether-held': page.held.map((r) => `${r.from}-${r.to}`).join(','),
          ...noteHeaders(page.buffer),
        })
        .send(page.data);
    } catch (err) {
      // The answer is the error body (`held` in it); the header says the same as on a page.
      const held = isDomainError(err, 'range-not-held') ? (err.extra?.held as readonly PositionRange[] | undefined) : undefined;
      if (held) reply.header('x-tether-held', held.map((r) => `${r.from}-${r.to}`).join(','));
      throw err;
    }
  });

  app.get('/sessions/:id/search', { schema: { params: IdParams, querystring: SearchQuery } }, async (req) => {
    const limit = req.query.limit === undefined ? DEFAULT_SEARCH_LIMIT : Number(req.query.limit);
    const result = await history.search(req.params.id, req.query.q, limit);
    return { q: req.query.q, matches: result.matches, complete: result.complete, scannedBytes: result.scannedBytes, buffer: result.buffer };
  });
  return Promise.resolve();
};
