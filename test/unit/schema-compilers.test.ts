/**
 * Validation and serialization on TypeBox's compiler answer exactly as fastify's ajv and
 * fast-json-stringify did: every schema of every route is mounted twice, once on fastify's
 * defaults (with the ajv options the server used before) and once on tether's compilers, both
 * behind the same error handler, and fed the same bad requests; status and body must match
 * byte for byte. Answers with a response schema are compared the same way.
 */
import Fastify, { type FastifyInstance, type FastifySchema, type HTTPMethods, type InjectOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesRoutes } from '../../src/transport/routes/changes.routes.js';
import { errorsPlugin } from '../../src/transport/errors.plugin.js';
import { historyRoutes } from '../../src/transport/routes/history.routes.js';
import { healthRoutes } from '../../src/transport/routes/health.routes.js';
import { opsRoutes } from '../../src/transport/routes/ops.routes.js';
import { pairRoutes } from '../../src/transport/routes/pair.routes.js';
import * as ChangesChecks from '../../src/transport/schemas/changes-routes.checks.js';
import { ChangesRouteSchemas } from '../../src/transport/schemas/changes-routes.schemas.js';
import * as RouteChecks from '../../src/transport/schemas/routes.checks.js';
import { RouteSchemas } from '../../src/transport/schemas/routes.schemas.js';
import * as SessionChecks from '../../src/transport/schemas/session-routes.checks.js';
import { SessionRouteSchemas } from '../../src/transport/schemas/session-routes.schemas.js';
import { typeboxCompilersFactory } from '../../src/transport/schema-compilers.js';
import { sessionsRoutes } from '../../src/transport/routes/sessions.routes.js';
import { streamRoutes } from '../../src/transport/stream/stream.plugin.js';
import { uploadsRoutes } from '../../src/transport/routes/uploads.routes.js';
import websocket from '@fastify/websocket';

interface Captured {
  readonly method: HTTPMethods;
  readonly url: string;
  readonly schema: FastifySchema;
}

/** Every route's schema, as the route plugins declare them (the handles are never called). */
async function routeSchemas(): Promise<Captured[]> {
  const app = Fastify({ schemaController: { compilersFactory: typeboxCompilersFactory } });
  const out: Captured[] = [];
  app.addHook('onRoute', (r) => {
    // HEAD routes are fastify's copies of the GETs.
    if (r.schema)
      for (const method of [r.method].flat().filter((m) => m !== 'HEAD')) out.push({ method: method, url: r.url, schema: r.schema });
  });
  const none = {} as never;
  await app.register(websocket);
  await app.register(healthRoutes, { health: none });
  await app.register(sessionsRoutes, { sessions: none });
  await app.register(historyRoutes, { history: none });
  await app.register(uploadsRoutes, { uploads: none });
  await app.register(changesRoutes, { changes: none });
  await app.register(pairRoutes, { pairing: none, daemon: none });
  await app.register(opsRoutes, { ops: none, chartsDir: '/nonexistent' });
  await app.register(streamRoutes, { stream: none, connections: none, pingIntervalMs: 1000 } as never);
  await app.ready();
  await app.close();
  return out;
}

/** Shapes no route has yet (nested objects, unions of objects, arrays of them), as bodies. */
const NESTED: Captured[] = [
  Type.Object(
    { a: Type.Object({ x: Type.String(), y: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), b: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object({
    u: Type.Union([
      Type.Object({ k: Type.Literal('one'), n: Type.Number() }, { additionalProperties: false }),
      Type.Object({ k: Type.Literal('two') }),
      Type.Null(),
    ]),
    b: Type.Boolean(),
    w: Type.Optional(Type.Union([Type.Object({ o: Type.Object({ x: Type.String() }) }), Type.Null()])),
  }),
  Type.Object(
    { list: Type.Array(Type.Object({ id: Type.String({ maxLength: 3 }) }, { additionalProperties: false }), { maxItems: 2 }) },
    { additionalProperties: false },
  ),
].map((body, i) => ({ method: 'POST', url: `/nested-${i}`, schema: { body } }));

/** The same route on fastify's default compilers (as the server was set up) or on tether's. */
async function mount(routes: readonly Captured[], ours: boolean): Promise<FastifyInstance> {
  const app = ours
    ? Fastify({ schemaController: { compilersFactory: typeboxCompilersFactory } })
    : Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } } });
  await app.register(errorsPlugin);
  for (const [i, r] of routes.entries()) {
    const { body, querystring, params } = r.schema as Record<string, unknown>;
    // Each schema on a route of its own: a body, a query or params are checked alone.
    const schema = Object.fromEntries(Object.entries({ body, querystring, params }).filter(([, v]) => v !== undefined)) as FastifySchema;
    app.route({ method: r.method, url: `/v${i}${r.url}`, schema, handler: async (_q, reply) => reply.code(204).send() });
  }
  await app.ready();
  return app;
}

const WRONG: unknown[] = [
  1,
  1.5,
  -1,
  0,
  'x',
  '',
  ' ',
  'a'.repeat(300),
  '\u0001',
  true,
  null,
  [],
  ['x'],
  {},
  { k: 1 },
  { k: 'one' },
  { k: 'one', n: 1, zz: 1 },
  { k: 'two', n: 'x' },
  { x: 1, zz: 1 },
  { x: 's', y: 0 },
  { zz: 1, x: 's' },
  [{ id: 'long id' }],
  [{ id: 'a', zz: 1 }],
  [{}, {}, {}],
  { o: { x: 1 } },
];
const QUERY_WRONG = ['', 'x', '-1', '1.5', '12', '99999999999999999', 'a'.repeat(300), 'bad id', '\u0001'];

/**
 * The routes hand fastify the generated JSON schemas; TypeBox makes values only from its own
 * schemas, so a value for a route's schema is made from the TypeBox definition of the same name.
 */
const DEFINITIONS = new Map<unknown, TSchema>(
  (
    [
      [RouteChecks.RouteSchemas, RouteSchemas],
      [SessionChecks.SessionRouteSchemas, SessionRouteSchemas],
      [ChangesChecks.ChangesRouteSchemas, ChangesRouteSchemas],
    ] as [Record<string, unknown>, Record<string, TSchema>][]
  ).flatMap(([generated, defined]) => Object.entries(generated).map(([name, g]) => [g, defined[name]!] as const)),
);
/** Every route schema's generated check, of the three modules. */
const ROUTE_CHECKS = new Map([...RouteChecks.CHECKS, ...SessionChecks.CHECKS, ...ChangesChecks.CHECKS]);
const create = (schema: TSchema): unknown => Value.Create(DEFINITIONS.get(schema) ?? schema);

/** A value the schema probably takes, to vary one field at a time from. */
function base(schema: TSchema): Record<string, unknown> {
  try {
    const v: unknown = create(schema);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // A pattern TypeBox cannot make a value for: start from nothing.
  }
  return {};
}

const fieldsOf = (schema: unknown): string[] => Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});

function bodies(schema: TSchema): unknown[] {
  const b = base(schema);
  const out: unknown[] = [undefined, null, 42, 'text', [], {}, { unknown: 1 }, { ...b, unknown: 1 }, b];
  for (const key of fieldsOf(schema)) {
    for (const w of WRONG) out.push({ [key]: w }, { ...b, [key]: w }, { ...b, [key]: w, zz: 1 }, { zz: 1, ...b, [key]: w });
    const rest = { ...b };
    delete rest[key];
    out.push(rest);
  }
  return out;
}

function queries(schema: unknown): Record<string, string>[] {
  const out: Record<string, string>[] = [{}, { unknown: '1' }];
  const keys = fieldsOf(schema);
  const good = Object.fromEntries(keys.map((k) => [k, '1']));
  for (const key of keys) for (const w of QUERY_WRONG) out.push({ [key]: w }, { ...good, [key]: w }, { ...good, [key]: w, zz: '1' });
  return out;
}

const PARAM_VALUES = ['ok', 'bad%20id', '.', 'a'.repeat(100), '%01', 'x.svg', 'chart.svg', '-'];

describe('request validation and response serialization on TypeBox', () => {
  let routes: Captured[];
  let ajv: FastifyInstance;
  let ours: FastifyInstance;
  beforeAll(async () => {
    routes = [...(await routeSchemas()), ...NESTED];
    ajv = await mount(routes, false);
    ours = await mount(routes, true);
  });
  afterAll(async () => {
    await ajv?.close();
    await ours?.close();
  });

  it('every route hands fastify a generated schema, with a generated check for it and each of its branches', async () => {
    // A schema without one would be checked by TypeBox compiled at start: the daemon would load it.
    const branches = (schema: unknown): unknown[] => {
      if (typeof schema !== 'object' || schema === null) return [];
      const own = (schema as { anyOf?: unknown[] }).anyOf ?? [];
      return [...own, ...Object.values(schema).flatMap((v) => (Array.isArray(v) ? v.flatMap(branches) : branches(v)))];
    };
    const declared = await routeSchemas();
    const parts = declared.flatMap(({ schema }) => [
      ...[schema.body, schema.querystring, schema.params].filter((p) => p !== undefined),
      ...Object.values((schema.response ?? {}) as Record<string, unknown>),
    ]);
    expect(parts.length).toBeGreaterThan(20);
    for (const part of parts) {
      expect(ROUTE_CHECKS.has(part as object), JSON.stringify(part).slice(0, 200)).toBe(true);
      for (const b of branches(part)) expect(ROUTE_CHECKS.has(b as object), JSON.stringify(b)).toBe(true);
    }
  });

  it('every bad body, query and path gets the same status and body as with ajv', async () => {
    let refused = 0;
    let compared = 0;
    for (const [i, r] of routes.entries()) {
      const { body, querystring, params } = r.schema as Record<string, TSchema | undefined>;
      const urlWith = (value: string) => `/v${i}${r.url.replace(/:[A-Za-z]+/g, value)}`;
      const cases: InjectOptions[] = [];
      if (body)
        for (const b of bodies(body))
          cases.push({
            method: r.method,
            url: urlWith('ok'),
            ...(b === undefined ? {} : { payload: JSON.stringify(b), headers: { 'content-type': 'application/json' } }),
          });
      if (querystring) for (const q of queries(querystring)) cases.push({ method: r.method, url: urlWith('ok'), query: q });
      if (params) for (const p of PARAM_VALUES) cases.push({ method: r.method, url: urlWith(p) });
      for (const c of cases) {
        const [a, o] = [await ajv.inject(c), await ours.inject(c)];
        const what = `${r.method} ${r.url} ${JSON.stringify(c)}`;
        expect({ status: o.statusCode, body: o.body }, what).toEqual({ status: a.statusCode, body: a.body });
        compared++;
        if (a.statusCode === 400) refused++;
      }
    }
    // The corpus reaches the validators: most cases are refused, on every kind of schema.
    expect(compared).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(compared / 2);
  });

  it('an answer with a response schema is written as fast-json-stringify wrote it', async () => {
    const withResponse = routes.flatMap((r) =>
      Object.entries((r.schema.response ?? {}) as Record<string, TSchema>).map(([status, schema]) => ({ status: Number(status), schema })),
    );
    expect(withResponse.length).toBeGreaterThan(5);
    const serve = async (ours: boolean) => {
      const app = ours ? Fastify({ schemaController: { compilersFactory: typeboxCompilersFactory } }) : Fastify();
      await app.register(errorsPlugin);
      for (const [i, { status, schema }] of withResponse.entries()) {
        if (status === 204) continue;
        // A value the schema takes, with a field it does not know at every level.
        const value: unknown = create(schema);
        const extra = JSON.parse(
          JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, zz: 'dropped' } : v)),
        ) as unknown;
        app.get(`/r${i}`, { schema: { response: { [status]: schema } } }, async (_q, reply) => reply.code(status).send(extra));
        app.get(`/m${i}`, { schema: { response: { [status]: schema } } }, async (_q, reply) => reply.code(status).send({ zz: 1 }));
        // Every scalar of the wrong type: coerced, or a 500, as before.
        const coerced = JSON.parse(
          JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? 7 : typeof v === 'number' ? `${v}.5` : v)),
        ) as unknown;
        app.get(`/c${i}`, { schema: { response: { [status]: schema } } }, async (_q, reply) => reply.code(status).send(coerced));
      }
      await app.ready();
      return app;
    };
    const [a, o] = [await serve(false), await serve(true)];
    try {
      for (const [i, { status }] of withResponse.entries()) {
        if (status === 204) continue;
        for (const url of [`/r${i}`, `/m${i}`, `/c${i}`]) {
          const [x, y] = [await a.inject({ url }), await o.inject({ url })];
          expect({ status: y.statusCode, body: y.body }, `${url} (${status})`).toEqual({ status: x.statusCode, body: x.body });
        }
      }
    } finally {
      await a.close();
      await o.close();
    }
  });
});
