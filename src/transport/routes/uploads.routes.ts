/**
 * The upload route (docs/api.md "Uploads"): `POST /sessions/:id/files?name=<file name>` with the
 * file as the raw body, of any content type, through a narrow `UploadsHandle`.
 *
 * Invariant: the body is never parsed or buffered whole here: it streams to the store, which
 * counts it against the limit; a declared length past the limit is refused before a byte is
 * read. The content-type parsers of this plugin replace the server's (JSON among them), so a
 * JSON file is stored as it is, not parsed.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import type { StoredUpload } from '../../uploads/upload-store.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

/** What the route needs of the uploads. */
export interface UploadsHandle {
  readonly maxBytes: number;
  upload(id: string, name: string, body: Readable, opts: { insert: boolean; declaredBytes: number | null }): Promise<StoredUpload>;
}

const { IdParams, UploadQuery } = RouteSchemas;

export const uploadsRoutes: FastifyPluginAsyncTypebox<{ uploads: UploadsHandle }> = (app, { uploads }) => {
  // Any content type, JSON included, arrives as the raw stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.post('/sessions/:id/files', { schema: { params: IdParams, querystring: UploadQuery } }, async (req, reply) => {
    const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
    // A request without a body (and so without a content type) still reaches the store as an empty file.
    const body = (req.body as Readable | undefined) ?? req.raw;
    const stored = await uploads.upload(req.params.id, req.query.name, body, {
      insert: req.query.insert === 'true',
      declaredBytes: Number.isFinite(declared) ? declared : null,
    });
    return reply.code(201).send(stored);
  });
  return Promise.resolve();
};
