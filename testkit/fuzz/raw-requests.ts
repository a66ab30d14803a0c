/**
 * The HTTP framing surface: a correct request to one of the server's routes, then spoiled at
 * the byte level the way a hostile peer or a smuggling attempt spoils it: the request line
 * (method, target, version), line ends, headers (folded, duplicated, huge, bad names and values,
 * no Host), the body's framing (Content-Length that lies or repeats, Transfer-Encoding variants,
 * broken chunks, both at once), pipelined requests, and writes split anywhere.
 *
 * What the answers must be: each one a status docs/api.md allows (the route's own, a 400 for what
 * HTTP cannot read, 401 without the token, 404, 413, 431 for headers too large), every refusal in
 * the one error shape; a success only for a request that carried the token; and the exchange
 * must end: answered, or closed.
 */
import fc from 'fast-check';
import { allowedStatuses, errorShapeProblem } from './oracle.js';
import { exchange, type RawResponse } from './raw-http.js';
import { api } from './requests.js';
import { fitting, type JsonSchema } from './schema-arbitrary.js';
import { FuzzFinding, type FuzzLedger, type FuzzRoute, type FuzzTarget } from './target.js';
import { MUTATIONS, mutate, type Draft, type Mutation } from './http-mutations.js';
import { fillPath, paramNames, takesBody } from './wire.js';

export interface RawCase {
  readonly route: FuzzRoute;
  readonly live: boolean;
  readonly param: string;
  readonly withToken: boolean;
  readonly body: unknown;
  readonly mutations: readonly (readonly [Mutation, number])[];
}

export function rawCases(t: FuzzTarget): fc.Arbitrary<RawCase> {
  return fc.constantFrom(...t.routes.filter((r) => !r.websocket && r.method !== 'HEAD')).chain((route) =>
    fc.record({
      route: fc.constant(route),
      live: fc.boolean(),
      param: fc.stringMatching(/^[a-z0-9]{1,12}$/),
      withToken: fc.boolean(),
      body: route.schema?.body ? fitting(route.schema.body as JsonSchema, fc.string({ maxLength: 12 })) : fc.constant({}),
      mutations: fc.array(fc.tuple(fc.constantFrom(...MUTATIONS), fc.nat(1 << 20)), { minLength: 1, maxLength: 3 }),
    }),
  );
}

/**
 * A spoiled request may end unanswered (the server still waiting for the rest, or slow), so its
 * effect would be unknown to the ledger: the bodies of the routes whose effects it follows
 * (a session made, a description set) get a field the schema refuses, so that such a request,
 * however framed, changes nothing.
 */
function unacted(route: FuzzRoute, body: unknown): unknown {
  const followed = (route.method === 'POST' && route.url === '/sessions') || (route.method === 'PATCH' && route.url === '/sessions/:id');
  return followed && typeof body === 'object' && body !== null ? { ...body, fz: 1 } : body;
}

/** The case as bytes on the wire, in the pieces they are written. */
export function rawBytes(t: FuzzTarget, c: RawCase): Buffer[] {
  const params = Object.fromEntries(
    paramNames(c.route).map((p) => [p, c.live && p === 'id' && c.route.method !== 'DELETE' ? t.live[0]! : c.param]),
  );
  const body = takesBody(c.route.method) ? Buffer.from(JSON.stringify(unacted(c.route, c.body)) ?? '{}') : Buffer.alloc(0);
  const d: Draft = {
    method: c.route.method,
    target: fillPath(c.route, params),
    version: 'HTTP/1.1',
    eol: '\r\n',
    headers: [
      ['Host', t.host],
      ...(c.withToken ? ([['Authorization', `Bearer ${t.token}`]] as [string, string][]) : []),
      ['Connection', 'close'],
    ],
    rawLines: [],
    body,
    framing: body.length > 0 ? 'cl' : 'none',
    tail: Buffer.alloc(0),
    pieces: 1,
  };
  if (body.length > 0) d.headers.push(['Content-Type', 'application/json']);
  for (const [m, n] of c.mutations) mutate(d, m, n, t);
  if (d.framing === 'cl') d.headers.push(['Content-Length', String(d.body.length)]);
  const payload =
    d.framing === 'chunked' ? Buffer.from(`${d.body.length.toString(16)}\r\n${d.body.toString('latin1')}\r\n0\r\n\r\n`, 'latin1') : d.body;
  const line = d.version === '' ? `${d.method} ${d.target}` : `${d.method} ${d.target} ${d.version}`;
  const head = [line, ...d.headers.map(([k, v]) => `${k}: ${v}`), ...d.rawLines].join(d.eol) + d.eol + d.eol;
  const all = Buffer.concat([Buffer.from(head, 'latin1'), payload, d.tail]);
  const cut = Array.from({ length: d.pieces - 1 }, (_, i) => Math.floor(((i + 1) * all.length) / d.pieces));
  return [0, ...cut].map((from, i) => all.subarray(from, cut[i] ?? all.length));
}

/** How long a server that says nothing to a spoiled request is left waiting for the rest of it. */
const QUIET_MS = 300;

/** The answers a raw case may get; a finding otherwise. */
export async function runRawCase(t: FuzzTarget, ledger: FuzzLedger, c: RawCase, opts: { timeoutMs: number }): Promise<void> {
  const pieces = rawBytes(t, c);
  const sent = Buffer.concat(pieces);
  const head = c.route.method === 'HEAD' && !c.mutations.some(([m]) => m.startsWith('method'));
  // A spoiled request may never be whole to the server (it waits for the rest): a quiet server ends the exchange.
  const ex = await exchange(t.peer, pieces, { timeoutMs: opts.timeoutMs, bodiless: (i) => i === 0 && head, quietMs: QUIET_MS });
  const evidence = {
    request: sent.subarray(0, 1200),
    answers: ex.responses.map((r) => ({ status: r.status, body: r.body.subarray(0, 300) })),
    error: ex.error,
  };
  const crashes = t.crashes();
  if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
  if (ex.error?.startsWith('unreadable')) throw new FuzzFinding('an answer that is not HTTP', evidence);
  const carriesToken = sent.includes(t.token);
  // A pipelined request (GET /health, /sessions, /nope) is answered on its own terms.
  const pipelined = c.mutations.some(([m]) => m === 'pipeline') ? [200] : [];
  const allowed = new Set([...allowedStatuses(c.route.method, c.route.url), 401, 431, ...pipelined]);
  // A 100 Continue is an interim answer (node sends it for Expect: 100-continue), not the request's.
  for (const res of ex.responses.filter((r) => r.status !== 100)) {
    ledger.count('raw-http', String(res.status));
    if (res.status < 400 && !carriesToken && c.route.auth === 'token')
      throw new FuzzFinding(`a ${res.status} to a request that carried no valid token`, evidence);
    if (!allowed.has(res.status)) throw new FuzzFinding(`${res.status} is not a status docs/api.md gives this request`, evidence);
    const shape = errorShapeProblem(res, head);
    if (shape) throw new FuzzFinding(shape, evidence);
    await settle(t, ledger, res, opts.timeoutMs);
  }
}

/** A success that changed something the ledger follows: a session made (deleted again), a description set. */
export async function settle(t: FuzzTarget, ledger: FuzzLedger, res: RawResponse, timeoutMs: number): Promise<void> {
  if (res.status !== 200 && res.status !== 201) return;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return;
  }
  if (typeof body !== 'object' || body === null) return;
  if (res.status === 201 && typeof body.id === 'string' && typeof body.name === 'string' && !('path' in body)) {
    ledger.created.add(body.id);
    const deleted = await api(t, 'DELETE', `/sessions/${body.id}`, undefined, timeoutMs);
    if (deleted.status === 204) ledger.created.delete(body.id);
  }
  if (res.status === 200 && typeof body.id === 'string' && typeof body.description === 'string')
    ledger.descriptions.set(body.id, body.description);
}
