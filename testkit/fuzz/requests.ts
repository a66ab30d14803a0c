/**
 * The route surface: every route of the server's table with its path parameters, query and body
 * made from the route's own schemas (fitting values and hostile ones), and for the git routes
 * also aimed at the fuzzer's repository (worktrees.ts), before the token (none, a wrong, revoked
 * or pairing token, the token where it does not count) and after it.
 *
 * What each answer must be: before the token, a 401 in the one error shape and nothing done;
 * after it, a status docs/api.md gives the route, errors in the one shape with a code of the
 * registry, and what a success says is true: a session created is there with its fields as sent
 * (then deleted; one with a worktree is in it, and removed with it), a description reads back
 * from tmux as sent, input taken reaches the pane and input refused never does, an upload holds
 * the bytes sent, the repository session's changes are its tree's, a diff is the file's asked.
 */
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { InputSchemas } from '../../src/protocol/input.checks.js';
import { UNREADABLE } from '../../src/transport/protocol-refusals.js';
import { allowedStatuses, errorShapeProblem } from './oracle.js';
import { exchange, httpRequest, type RawResponse } from './raw-http.js';
import { canaries } from './hostile.js';
import { anyJson, fitting, hostileValue, type JsonSchema } from './schema-arbitrary.js';
import { FuzzFinding, type FuzzLedger, type FuzzRoute, type FuzzTarget } from './target.js';
import { authCases, authenticated, authParts, contentTypes, fillPath, paramNames, queryString, takesBody, type AuthCase } from './wire.js';
import {
  checkChanges,
  checkDiff,
  checkWorktreeSession,
  CHANGES_ROUTE,
  CREATE_ROUTE,
  createBodies,
  DIFF_ROUTE,
  diffPaths,
} from './worktrees.js';

/** The input route's body: the one input schema (src/protocol/input.ts), not the route's loose `{type}`. */
const INPUT_BODY: JsonSchema = { anyOf: Object.values(InputSchemas) };
const INPUT_ROUTE = 'POST /sessions/:id/input';

export type BodyCase =
  | { readonly kind: 'none' }
  | { readonly kind: 'json'; readonly value: unknown; readonly contentType: string | null }
  | { readonly kind: 'text'; readonly text: string; readonly contentType: string | null }
  /** A Content-Length past every limit (1 GiB; the body itself is not sent: the header is refused). */
  | { readonly kind: 'over-limit'; readonly contentType: string | null };

export interface RequestCase {
  readonly route: FuzzRoute;
  readonly auth: AuthCase;
  readonly params: Readonly<Record<string, string>>;
  readonly query: readonly (readonly [string, string])[];
  readonly body: BodyCase;
}

/** Bodies that are not JSON, or JSON of no use. */
const TEXT_BODIES = fc.oneof(
  fc.constantFrom('', 'not json', '{"a":', '[]', 'null', '"s"', '1', '{"__proto__":{"x":1}}', '{"a":1,"a":2}', '\ufeff{}'),
  fc.nat(20_000).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.string({ maxLength: 64, unit: 'binary' }),
);

function bodyCases(route: FuzzRoute, t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<BodyCase> {
  if (!takesBody(route.method)) return fc.constant({ kind: 'none' });
  const key = `${route.method} ${route.url}`;
  const schema = key === INPUT_ROUTE ? INPUT_BODY : (route.schema?.body as JsonSchema | undefined);
  // Input is text on its way to tmux: most of it fits, so that the pane can be searched for it.
  const fits = key === INPUT_ROUTE ? 3 : 1;
  const fromSchema = schema
    ? fc.oneof({ weight: fits, arbitrary: fitting(schema, text) }, { weight: 1, arbitrary: hostileValue(schema, text) })
    : anyJson;
  // A session is asked for in the fuzzer's repository as often as anywhere: git runs then.
  const json =
    key === CREATE_ROUTE
      ? fc.oneof({ weight: 1, arbitrary: fromSchema }, { weight: 2, arbitrary: createBodies(t, text, canaries(t.canaryDir)) })
      : fromSchema;
  return fc.oneof(
    { weight: 16, arbitrary: fc.record({ kind: fc.constant('json' as const), value: json, contentType: contentTypes }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('text' as const), text: TEXT_BODIES, contentType: contentTypes }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('over-limit' as const), contentType: contentTypes }) },
  );
}

function paramCases(route: FuzzRoute, t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<Record<string, string>> {
  const props = ((route.schema?.params as JsonSchema | undefined)?.properties ?? {}) as Record<string, JsonSchema>;
  // The live sessions take input and descriptions; the fuzzer never deletes them.
  const live = route.method === 'DELETE' ? [] : t.live;
  const entries = paramNames(route).map((name) => {
    const schema = props[name] ?? { type: 'string' };
    const options = [
      { weight: 2, arbitrary: fitting(schema, text) as fc.Arbitrary<string> },
      { weight: 2, arbitrary: text },
      ...(live.length > 0 && name === 'id' ? [{ weight: 5, arbitrary: fc.constantFrom(...live) }] : []),
    ];
    return [name, fc.oneof(...options)] as const;
  });
  return fc.record(Object.fromEntries(entries));
}

/** A query value as text: what a peer puts in the URL for a value of any JSON type. */
const asQueryValues = (v: unknown): string[] =>
  Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : [typeof v === 'string' ? v : JSON.stringify(v)];

function queryCases(route: FuzzRoute, t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<[string, string][]> {
  const schema = route.schema?.querystring as JsonSchema | undefined;
  const props = Object.fromEntries(Object.entries(schema?.properties ?? {}).filter(([k]) => k !== 'token'));
  const fromSchema =
    Object.keys(props).length === 0
      ? fc.constant<unknown>({})
      : fc.oneof(fitting({ ...schema, properties: props }, text), hostileValue({ ...schema, properties: props, required: [] }, text));
  // A diff's path names the repository's own files as often as anything: git runs then.
  const own =
    `${route.method} ${route.url}` === DIFF_ROUTE
      ? fc.oneof(fromSchema, diffPaths(t, text, canaries(t.canaryDir)) as fc.Arbitrary<unknown>)
      : fromSchema;
  const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom('lastSeq', 'from', 'q', 'name', 'keepBuffer', 'x'), text), text), {
    maxLength: 2,
  });
  return fc.tuple(own, fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extra })).map(([o, more]) =>
    [
      ...(typeof o === 'object' && o !== null && !Array.isArray(o)
        ? Object.entries(o).flatMap(([k, v]) => asQueryValues(v).map((s) => [k, s] as [string, string]))
        : []),
      ...more,
      // The token is the auth case's to place: a `token` here would be the one read first.
    ].filter(([k]) => k !== 'token'),
  );
}

/** Requests to the server's non-WebSocket routes, as a peer may send them. */
export function requestCases(t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<RequestCase> {
  // Routes that take a body have the most to fuzz; HEAD is every GET again: now and then.
  const routes = t.routes.filter((r) => !r.websocket && r.method !== 'HEAD');
  const withBody = routes.filter((r) => takesBody(r.method));
  const heads = t.routes.filter((r) => !r.websocket && r.method === 'HEAD');
  const input = routes.filter((r) => `${r.method} ${r.url}` === INPUT_ROUTE);
  const git = routes.filter((r) => [CREATE_ROUTE, CHANGES_ROUTE, DIFF_ROUTE].includes(`${r.method} ${r.url}`));
  const route = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...routes) },
    ...(withBody.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...withBody) }] : []),
    ...(input.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...input) }] : []),
    ...(git.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...git) }] : []),
    ...(heads.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...heads) }] : []),
  );
  return route.chain((route) =>
    fc.record({
      route: fc.constant(route),
      auth: authCases,
      params: paramCases(route, t, text),
      query: queryCases(route, t, text),
      body: bodyCases(route, t, text),
    }),
  );
}

/** The body bytes and headers of a body case. */
function bodyParts(body: BodyCase): { bytes: Buffer | undefined; headers: [string, string][] } {
  if (body.kind === 'none') return { bytes: undefined, headers: [] };
  const ct: [string, string][] = body.contentType === null ? [] : [['Content-Type', body.contentType]];
  if (body.kind === 'over-limit') return { bytes: Buffer.from('{"data":"'), headers: [...ct, ['Content-Length', String(2 ** 30)]] };
  const bytes = Buffer.from(body.kind === 'json' ? (JSON.stringify(body.value) ?? 'null') : body.text, 'utf8');
  return { bytes, headers: [...ct, ['Content-Length', String(bytes.length)]] };
}

/** An input body carries a marker ahead of its text, so the pane can be searched for it later. */
function markInput(c: RequestCase, ledger: FuzzLedger): { c: RequestCase; marker: string | null; typed: Buffer | null } {
  if (`${c.route.method} ${c.route.url}` !== INPUT_ROUTE || c.body.kind !== 'json') return { c, marker: null, typed: null };
  const v = c.body.value as { type?: unknown; data?: unknown } | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.data !== 'string') return { c, marker: null, typed: null };
  const marker = ledger.marker();
  ledger.origin.set(marker, fc.stringify(c).slice(0, 2000));
  const value = { ...v, data: marker + v.data };
  const typed = v.type === 'keys' ? Buffer.from(value.data, 'utf8') : null;
  return { c: { ...c, body: { ...c.body, value } }, marker, typed };
}

export interface RequestOptions {
  readonly timeoutMs: number;
}

/** Sends one request case and holds its answer to docs/api.md; throws a FuzzFinding otherwise. */
export async function runRequestCase(t: FuzzTarget, ledger: FuzzLedger, original: RequestCase, opts: RequestOptions): Promise<void> {
  const { c, marker, typed } = markInput(original, ledger);
  const auth = authParts(t, c.auth);
  const path = fillPath(c.route, c.params) + queryString([...c.query, ...auth.query]);
  const body = bodyParts(c.body);
  const bytes = httpRequest(
    c.route.method,
    path,
    [['Host', t.host], ...auth.headers, ...body.headers, ['Connection', 'close']],
    body.bytes,
  );
  const head = c.route.method === 'HEAD';
  const ex = await exchange(t.peer, bytes, { timeoutMs: opts.timeoutMs, bodiless: () => head });
  const evidence = { request: bytes.subarray(0, 1500), answers: ex.responses.map(show), error: ex.error };
  const crashes = t.crashes();
  if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
  if (ex.hung) throw new FuzzFinding(`no answer within ${opts.timeoutMs} ms`, evidence);
  if (ex.responses.length !== 1) throw new FuzzFinding(`${ex.responses.length} answers to one request`, evidence);
  const res = ex.responses[0]!;
  ledger.count('requests', `${c.route.method}:${res.status}`);
  const refusedInput = () => {
    if (marker) ledger.refused.add(marker);
  };
  if (c.route.auth === 'token' && !authenticated(c.auth)) {
    refusedInput();
    const shape = errorShapeProblem(res, head);
    if (shape) throw new FuzzFinding(shape, evidence);
    // Only a request that cannot be read at all is refused before its token is looked at.
    if ((res.status === 400 || res.status === 431) && (head || unreadable(res))) return;
    if (res.status !== 401 || res.headers['www-authenticate'] !== 'Bearer')
      throw new FuzzFinding('a request without a valid token was not a 401 with WWW-Authenticate: Bearer', evidence);
    return;
  }
  if (!allowedStatuses(c.route.method, c.route.url).has(res.status))
    throw new FuzzFinding(`${res.status} is not a status docs/api.md gives ${c.route.method} ${c.route.url}`, evidence);
  const shape = errorShapeProblem(res, head);
  if (shape) throw new FuzzFinding(shape, evidence);
  if (res.status >= 400) {
    refusedInput();
    return;
  }
  if (marker) ledger.delivered.set(marker, typed ?? Buffer.from(marker));
  await checkSuccess(t, ledger, c, res, opts, evidence);
}

/** A refusal of a request that could not be read (src/transport/protocol-refusals.ts). */
export const unreadable = (r: RawResponse): boolean => r.body.toString('utf8').includes(`"message":"${UNREADABLE}`);

const show = (r: RawResponse) => ({ status: r.status, headers: r.headers, body: r.body.subarray(0, 400) });

/** An authenticated JSON request, for the fuzzer's own checks. */
export async function api(
  t: FuzzTarget,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; json: unknown }> {
  const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const req = httpRequest(
    method,
    path,
    [
      ['Host', t.host],
      ['Authorization', `Bearer ${t.token}`],
      ...(bytes
        ? ([
            ['Content-Type', 'application/json'],
            ['Content-Length', String(bytes.length)],
          ] as [string, string][])
        : []),
      ['Connection', 'close'],
    ],
    bytes,
  );
  const ex = await exchange(t.peer, req, { timeoutMs });
  const res = ex.responses[0];
  if (!res) throw new Error(`${method} ${path}: no answer (${ex.error ?? (ex.hung ? 'hung' : 'closed')})`);
  const text = res.body.toString('utf8');
  return { status: res.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

/** What a success promised, checked. */
async function checkSuccess(t: FuzzTarget, ledger: FuzzLedger, c: RequestCase, res: RawResponse, opts: RequestOptions, evidence: object) {
  const key = `${c.route.method} ${c.route.url}`;
  const sent = (c.body.kind === 'json' ? c.body.value : undefined) as Record<string, unknown> | undefined;
  const answer = () => JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  if (key === CREATE_ROUTE && res.status === 201) {
    const { id } = answer() as { id: string };
    ledger.created.add(id);
    if (typeof sent?.worktree === 'object' && sent.worktree !== null) {
      await checkWorktreeSession((m, p) => api(t, m, p, undefined, opts.timeoutMs), ledger, id, sent, evidence);
      ledger.created.delete(id);
      return;
    }
    const list = (await api(t, 'GET', '/sessions', undefined, opts.timeoutMs)).json as Record<string, unknown>[];
    const item = list.find((s) => s.id === id);
    const want = { id: sent?.name ?? id, project: sent?.project ?? null, ...(sent?.cwd !== undefined ? { cwd: sent.cwd } : {}) };
    const got = item ? { id: item.id, project: item.project, ...(sent?.cwd !== undefined ? { cwd: item.cwd } : {}) } : null;
    if (JSON.stringify(got) !== JSON.stringify(want))
      throw new FuzzFinding('a created session is not listed as it was asked for', { ...evidence, want, got });
    const deleted = await api(t, 'DELETE', `/sessions/${id}`, undefined, opts.timeoutMs);
    if (deleted.status !== 204)
      throw new FuzzFinding(`deleting the session just created answered ${deleted.status}`, { ...evidence, deleted });
    ledger.created.delete(id);
  }
  if (key === CHANGES_ROUTE && res.status === 200) checkChanges(t, ledger, c.params.id!, answer(), evidence);
  if (key === DIFF_ROUTE && res.status === 200) {
    const asked = c.query.find(([k]) => k === 'path')?.[1];
    if (asked !== undefined) checkDiff(ledger, asked, answer(), evidence);
  }
  if (key === 'PATCH /sessions/:id' && typeof sent?.description === 'string') {
    const got = answer().description;
    if (got !== sent.description) throw new FuzzFinding('a description was answered otherwise than it was set', { ...evidence, got });
    ledger.descriptions.set(c.params.id!, sent.description);
  }
  if (key === 'POST /sessions/:id/files') {
    const a = answer() as { path?: unknown; bytes?: unknown; name?: unknown };
    const body =
      c.body.kind === 'json'
        ? Buffer.from(JSON.stringify(c.body.value) ?? 'null')
        : c.body.kind === 'text'
          ? Buffer.from(c.body.text)
          : Buffer.alloc(0);
    const ok =
      typeof a.path === 'string' &&
      typeof a.name === 'string' &&
      a.bytes === body.length &&
      ![...a.name].some((ch) => ch === '/' || ch.charCodeAt(0) < 0x20) &&
      a.path.startsWith(t.uploadsRoot) &&
      !a.path.includes('/../') &&
      existsSync(a.path) &&
      readFileSync(a.path).equals(body);
    if (!ok) throw new FuzzFinding('an upload was not stored as its answer says', { ...evidence, answer: a });
  }
}
