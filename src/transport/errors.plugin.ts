/**
 * One error body everywhere: `{error, message}` with the codes of src/errors.ts. Validation
 * errors name the field; bodies over the limit are 413; anything unexpected is a 500 whose
 * details go to the log only (never a stack or a secret in an answer).
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, ProtocolError } from '../errors.js';

function validationMessage(err: FastifyError): string {
  const v = err.validation?.[0];
  if (!v) return err.message;
  const ctx = err.validationContext ?? 'body';
  const path = v.instancePath ? `${ctx}${v.instancePath}` : ctx;
  const missing = (v.params as { missingProperty?: string; additionalProperty?: string } | undefined) ?? {};
  if (missing.missingProperty) return `${path}/${missing.missingProperty}: is required`;
  if (missing.additionalProperty) return `${path}/${missing.additionalProperty}: is not a known field`;
  return `${path}: ${v.message ?? 'is not valid'}`;
}

/** Adds the error and not-found handlers to the root instance. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return reply.code(err.status).send({ error: err.code, message: err.message });
    if (err instanceof ProtocolError) return reply.code(400).send({ error: 'bad-request', message: err.message });
    if (err.validation) return reply.code(400).send({ error: 'bad-request', message: validationMessage(err) });
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send({ error: 'payload-too-large', message: 'the body is larger than the limit' });
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Malformed JSON, a wrong content type, an empty JSON body: the client's mistake.
      return reply.code(400).send({ error: 'bad-request', message: err.message });
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: 'internal-error', message: 'an internal error occurred; see the tether log' });
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: 'not-found', message: `no route ${req.method} ${req.url.split('?')[0]}` }));
}
