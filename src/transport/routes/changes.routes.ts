/**
 * What a session's agent changed (docs/api.md "Worktrees and changes"): the files changed in its
 * tree against its base with the commits since, and one file's diff, through a narrow
 * `ChangesHandle`.
 *
 * Invariant: the path a client names is data for git after `--`, confined to the session's
 * working tree before git sees it (the handle refuses `..`, absolute paths and symlinks out).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FileDiff } from '../../git/changes.js';
import type { SessionChanges } from '../../service/workspaces/workspaces.service.js';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { ChangesRouteSchemas } from '../schemas/changes-routes.checks.js';

/** What the routes need of the workspaces. Unknown sessions throw `session-not-found`. */
export interface ChangesHandle {
  changes(id: string): Promise<SessionChanges>;
  diff(id: string, path: string): Promise<FileDiff>;
}

const { IdParams, ErrorBody } = RouteSchemas;
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 503: ErrorBody };

export const changesRoutes: FastifyPluginAsyncTypebox<{ changes: ChangesHandle }> = (app, { changes }) => {
  app.get(
    '/sessions/:id/changes',
    { schema: { params: IdParams, response: { 200: ChangesRouteSchemas.Changes, ...errors } } },
    async (req) => {
      const answer = await changes.changes(req.params.id);
      return { ...answer, files: [...answer.files], commits: [...answer.commits] };
    },
  );
  app.get(
    '/sessions/:id/changes/diff',
    {
      schema: { params: IdParams, querystring: ChangesRouteSchemas.DiffQuery, response: { 200: ChangesRouteSchemas.FileDiff, ...errors } },
    },
    async (req) => changes.diff(req.params.id, req.query.path),
  );
  return Promise.resolve();
};
