/**
 * What the daemon may answer, as docs/api.md says it: the statuses of each route, the one error
 * body `{error, message}` whose code is in the registry (src/errors.ts) with that code's status,
 * and the close codes a WebSocket may end with. The fuzzer holds every answer to this.
 *
 * Invariant: a route the table does not name (one added after it) is still held to the registry:
 * any status the registry gives a client-facing code, never a 500.
 */
import { CLOSE_CODES, HTTP_ERRORS } from '../../src/errors.js';
import type { RawResponse } from './raw-http.js';

/** A route as the server's table names it (src/transport/server.ts `ServedRoute`). */
export const routeKey = (method: string, url: string): string => `${method} ${url}`;

/**
 * The statuses docs/api.md gives each route when the token is good, besides those any request
 * may meet (`ANY_REQUEST`). HEAD answers as its GET.
 */
export const DOCUMENTED_STATUSES: Readonly<Record<string, readonly number[]>> = {
  'GET /health': [200],
  'GET /sessions': [200],
  'POST /sessions': [201, 409, 503],
  'PATCH /sessions/:id': [200, 404],
  'DELETE /sessions/:id': [204, 404, 409],
  'GET /sessions/:id/thumbnail': [200, 404],
  'POST /sessions/:id/input': [204, 404, 409, 503],
  'POST /sessions/:id/respawn': [200, 404, 409, 503],
  'GET /sessions/:id/commands': [200, 404],
  'POST /sessions/:id/files': [201, 404, 409, 503],
  'GET /sessions/:id/history': [200, 404, 416],
  'GET /sessions/:id/search': [200, 404, 503],
  'GET /sessions/:id/changes': [200, 404, 409, 503],
  'GET /sessions/:id/changes/diff': [200, 404, 409, 503],
  'POST /pair': [201, 401, 429],
  'PUT /device': [200],
  'GET /ops': [200],
  'GET /ops/charts/:name': [200, 404],
  'GET /ops/actors': [200],
  'GET /sessions/:id/stream': [101, 404],
  'GET /sessions/:id/side': [101, 404],
  'GET /ops/events': [101],
  // Asks and answers (#33), documented before they reach this branch's table: a route not served
  // is never looked up here.
  'GET /sessions/:id': [200, 404],
  'POST /sessions/:id/answer': [200, 404, 409, 503],
  'GET /ops/answers': [200],
  // A scheduled continue and the Live Activity tokens (#39; docs/api.md "Continue", "PUT /device/live-activity").
  'POST /sessions/:id/continue': [201, 404, 409, 503],
  'DELETE /sessions/:id/continue': [200, 404, 503],
  'PUT /device/live-activity': [200, 409],
  'DELETE /device/live-activity': [200],
  // Prompts (docs/api.md "Prompts"): 202 a new one queued, 200 the one its id named already.
  'POST /sessions/:id/prompt': [200, 202, 404, 409, 503],
  'GET /sessions/:id/prompts': [200, 404],
  'DELETE /sessions/:id/prompts/:promptId': [200, 404, 409],
  // The agents' usage windows, per account (docs/api.md "Usage").
  'GET /usage': [200],
};

/**
 * What any request may be answered: malformed (400: a bad URL, header, body or query), a body
 * over the limit (413), no such route (404), headers (the URL among them) over 16 KiB (431).
 */
export const ANY_REQUEST: readonly number[] = [400, 404, 413, 431];

/** Every status the registry gives a code a client can act on. */
const REGISTRY_STATUSES = new Set(Object.entries(HTTP_ERRORS).flatMap(([code, status]) => (code === 'internal-error' ? [] : [status])));

/** The statuses `method url` may answer with a good token. */
export function allowedStatuses(method: string, url: string): ReadonlySet<number> {
  const own = DOCUMENTED_STATUSES[routeKey(method === 'HEAD' ? 'GET' : method, url)];
  if (!own) return new Set([200, 201, 204, ...REGISTRY_STATUSES]);
  return new Set([...own, ...ANY_REQUEST]);
}

/** Why `res` is not an answer in the one error shape of the registry, or null when it is. */
export function errorShapeProblem(res: RawResponse, head: boolean): string | null {
  if (res.status < 400) return null;
  if (head) return null;
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    return `a ${res.status} whose body is not JSON: ${JSON.stringify(res.body.toString('latin1').slice(0, 200))}`;
  }
  if (typeof body !== 'object' || body === null) return `a ${res.status} whose body is not an object`;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error !== 'string' || typeof message !== 'string')
    return `a ${res.status} without {error, message}: ${JSON.stringify(body).slice(0, 200)}`;
  const status = (HTTP_ERRORS as Record<string, number>)[error];
  if (status === undefined) return `a ${res.status} with the error code "${error}", which the registry does not have`;
  if (status !== res.status) return `a ${res.status} with the error code "${error}", whose status is ${status}`;
  if (error === 'internal-error') return `a 500 internal-error (a bug; the daemon's log has it)`;
  return null;
}

/**
 * The close codes docs/api.md lists: tether's own, and those of the WebSocket protocol itself
 * for a client that breaks it (ws answers them): 1002 a frame against the protocol, 1007 text
 * that is not UTF-8 (or a compressed message that does not inflate), 1008 a message in too many
 * fragments, 1009 a message too big.
 */
export const DOCUMENTED_CLOSE_CODES: ReadonlySet<number> = new Set([...Object.values(CLOSE_CODES), 1002, 1007, 1008, 1009]);
