/**
 * What a failed request tells the client, and what the log is told about any request.
 *
 * Invariants: one error body everywhere, `{error, message}` read off the failure's row of the
 * one table (src/errors.ts, through src/transport/error-translation.ts); fastify's own errors
 * become DomainErrors first;
 * validation errors name the field; an unexpected error is a 500 with a generic message and
 * its details go to the log only (never a stack or a secret in an answer). No log line carries
 * a token: the request serializer drops headers and redacts `token` in the URL, and the redact
 * paths catch an `authorization` header or a `token` field logged by hand.
 */
import { LogController, type FastifyError, type FastifyPluginCallback, type FastifyReply, type FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../errors.js';
import { httpFailure } from './error-translation.js';

/**
 * A URL with the value of every query parameter whose name mentions a token (`token`,
 * `access_token`, `pairingToken`...) replaced: a token sent in the wrong place is still a token.
 */
export function redactUrl(url: string): string {
  return url.replace(/([?&;][^=&#;]*token[^=&#;]*=)[^&#;]*/gi, '$1[redacted]');
}

/** pino redact paths: where a token could sit in a logged object. */
export const LOG_REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'token',
  '*.token',
  'req.query.token',
  'query.token',
];

/** pino serializers for fastify's `req` objects: no headers, the token redacted from the URL. */
export const LOG_SERIALIZERS = {
  req: (req: { method?: string; url?: string; ip?: string }) => ({
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
    remoteAddress: req.ip,
  }),
};

/**
 * fastify's per-request log lines, with the URL redacted also where fastify would put it in a
 * message string: an answered request is a `debug` line (a phone polling would otherwise fill
 * the log at `info`), a refused one (4xx) `info`, a failed one `error`; the incoming line is `debug`.
 * A successful WebSocket upgrade is hijacked and never "completes": the stream logs those.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = { req: request, res: reply, ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else if (reply.statusCode >= 400) reply.log.info(fields, 'request');
    else reply.log.debug(fields, 'request');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.info({ req: request }, 'route not found');
  }
}

/** The registry code for a client error fastify raised with only a status. */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 404:
      return 'not-found';
    case 413:
      return 'too-large';
    case 429:
      return 'rate-limited';
    default:
      return 'invalid';
  }
}

/** `body.description must be string`: the field, then what is wrong with it. */
export function validationMessage(err: FastifyError): string {
  const v = err.validation?.[0];
  if (!v) return err.message;
  const path = `${err.validationContext ?? 'body'}${v.instancePath.replaceAll('/', '.')}`;
  const params = (v.params ?? {}) as { missingProperty?: string; additionalProperty?: string };
  if (params.missingProperty) return `${path}.${params.missingProperty} is required`;
  if (params.additionalProperty) return `${path}.${params.additionalProperty} is not a known field`;
  return `${path} ${v.message ?? 'is not valid'}`;
}

/** A client's mistake in the body itself: the message for it, or null when it is not one. */
function bodyProblem(err: FastifyError, req: FastifyRequest): string | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'the body is not valid JSON';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the body is empty but its content type is application/json';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `the content type ${String(req.headers['content-type'] ?? '(none)').slice(0, 100)} is not accepted here: send application/json`;
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the Content-Length does not match the body';
    default:
      return null;
  }
}

/** fastify's own refusals as the DomainError they are; anything else (a bug) as it is. */
function asDomainError(err: FastifyError, req: FastifyRequest, bodyLimit: number): unknown {
  if (err instanceof DomainError) return err;
  if (err.validation) return new DomainError('invalid', validationMessage(err));
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new DomainError('too-large', `the body is larger than the limit of ${bodyLimit} bytes`);
  const problem = bodyProblem(err, req);
  if (problem !== null) return new DomainError('invalid', problem);
  const status = err.statusCode ?? 500;
  return status >= 400 && status < 500 ? new DomainError(codeOfStatus(status), err.message) : err;
}

const errors: FastifyPluginCallback = (app, _opts, done) => {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const failure = httpFailure(asDomainError(err, req, app.initialConfig.bodyLimit ?? 0));
    if (failure.internal) req.log.error({ err }, 'request failed');
    return reply.code(failure.status).send(failure.body);
  });
  app.setNotFoundHandler((req, reply) => {
    const failure = httpFailure(new DomainError('not-found', `no route ${req.method} ${req.url.split('?')[0]}`));
    return reply.code(failure.status).send(failure.body);
  });
  done();
};

/** The error and not-found handlers, on the root instance: register it before the routes. */
export const errorsPlugin: FastifyPluginCallback = Object.assign(errors, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'tether-errors',
});
