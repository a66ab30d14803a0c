/**
 * fastify's request validation and response serialization on TypeBox's checks, the ones the
 * protocol and the records already use: fastify's default pair (ajv and fast-json-stringify,
 * which brings ajv along) is never loaded, a daemon's memory less (docs/benchmarks.md "Memory").
 * The routes' schemas come with their generated checks (routes.checks.ts), so TypeBox itself is
 * loaded only to word a refused request (protocol/schema-check.ts).
 *
 * Invariants: the answer to a request is the one ajv would give. A bad request fails with one
 * error in ajv's shape and order (the type, then a missing required field, then an unknown
 * field, then the fields in order; ajv's wording), which errors.plugin.ts words.
 * A response is written as fast-json-stringify wrote it: the schema's fields in the schema's
 * order, others dropped, a missing required field a 500.
 */
import type { FastifySchemaCompiler, FastifySchemaValidationError, FastifySerializerCompiler, FastifyServerOptions } from 'fastify';
import type { TSchema } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import { DomainError } from '../errors.js';
import { checkOf, type SchemaCheck } from '../protocol/schema-check.js';
import { CHECKS as ROUTE_CHECKS } from './schemas/routes.checks.js';
import { CHECKS as ANSWER_ROUTE_CHECKS } from './schemas/answer-routes.checks.js';
import { CHECKS as SESSION_ROUTE_CHECKS } from './schemas/session-routes.checks.js';
import { CHECKS as CHANGES_ROUTE_CHECKS } from './schemas/changes-routes.checks.js';
import { CHECKS as PROMPT_ROUTE_CHECKS } from './schemas/prompt-routes.checks.js';
import { CHECKS as USAGE_ROUTE_CHECKS } from './schemas/usage-routes.checks.js';

/** Every route schema's generated check. */
const GENERATED = new Map([
  ...ROUTE_CHECKS,
  ...SESSION_ROUTE_CHECKS,
  ...ANSWER_ROUTE_CHECKS,
  ...CHANGES_ROUTE_CHECKS,
  ...PROMPT_ROUTE_CHECKS,
  ...USAGE_ROUTE_CHECKS,
]);

type TypeBoxError = TLocalizedValidationError;

/** One check per schema object (fastify compiles each route part once). */
const checks = new WeakMap<object, SchemaCheck>();
function compiled(schema: TSchema): SchemaCheck {
  let c = checks.get(schema);
  if (!c) checks.set(schema, (c = checkOf(GENERATED, schema)));
  return c;
}

/** Keywords ajv reports after their branches' errors, as TypeBox does. */
const AFTER_BRANCHES = new Set(['anyOf', 'oneOf', 'allOf', 'not', 'if']);

/**
 * The error ajv (allErrors off) would have reported first, among all of TypeBox's. Both walk
 * the schema depth first and try every branch of an anyOf before reporting it, so TypeBox's
 * first error is ajv's but for one difference: ajv checks what a value itself breaks (too many
 * items, an unknown field) before going into its items and fields, TypeBox after them. So the
 * first error moves out to the outermost value around it that broke something itself. An
 * unknown field also shows twice in TypeBox (the field, then the object); ajv reports the object.
 */
export function firstError(errors: readonly TypeBoxError[]): TypeBoxError | undefined {
  const all = errors.filter((e) => e.keyword !== 'boolean');
  let first = all[0];
  if (first === undefined) return undefined;
  for (const e of all) {
    if (AFTER_BRANCHES.has(e.keyword) || e.instancePath.length >= first.instancePath.length) continue;
    // Around the first error, on its branch of the schema.
    if ((first.instancePath + '/').startsWith(e.instancePath + '/') && (first.schemaPath + '/').startsWith(e.schemaPath + '/')) first = e;
  }
  return first;
}

/** A TypeBox error in ajv's shape and words (ajv names the one missing or unknown field in its params). */
export function ajvError(e: TypeBoxError): FastifySchemaValidationError {
  const where = { keyword: e.keyword, instancePath: e.instancePath, schemaPath: e.schemaPath };
  const params = e.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  const missingProperty = e.keyword === 'required' ? params.requiredProperties?.[0] : undefined;
  if (missingProperty !== undefined) {
    return { ...where, params: { missingProperty }, message: `must have required property '${missingProperty}'` };
  }
  const additionalProperty = e.keyword === 'additionalProperties' ? params.additionalProperties?.[0] : undefined;
  if (additionalProperty !== undefined) {
    return { ...where, params: { additionalProperty }, message: 'must NOT have additional properties' };
  }
  return { ...where, params: e.params, message: e.message.replace(/^must not /, 'must NOT ') };
}

/** fastify's validator compiler: TypeBox's check; on failure, ajv's first error. */
export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const check = compiled(schema);
  const validate = (data: unknown): boolean => {
    if (check.Check(data)) return true;
    const first = firstError(check.Errors(data));
    validate.errors = first ? [ajvError(first)] : [];
    return false;
  };
  validate.errors = [] as FastifySchemaValidationError[];
  return validate;
};

interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
}

/** A serialization that cannot follow its schema: a bug (`internal`), a 500 as fast-json-stringify's was. */
const shapeBroken = (message: string): DomainError => new DomainError('internal', message);

/** A scalar as fast-json-stringify coerced it to its schema's type. */
function scalar(type: string | undefined, value: unknown, at: string): unknown {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (value === null) return '';
      // As fast-json-stringify did: a Date as ISO text, anything else as its toString().
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      return value instanceof Date ? value.toISOString() : String(value);
    case 'boolean':
      return Boolean(value);
    case 'null':
      return null;
    case 'integer':
    case 'number': {
      const n = Number(value);
      if (Number.isNaN(n)) throw shapeBroken(`the value of ${at || 'the answer'} is not a number`);
      if (!Number.isFinite(n)) return null;
      return type === 'integer' ? Math.trunc(n) : n;
    }
    default:
      return value;
  }
}

/** `value` cut to `schema`: the schema's fields in its order, nothing else. */
function project(schema: JsonSchema, value: unknown, at: string): unknown {
  if (schema.anyOf) {
    const branch = schema.anyOf.find((s) => compiled(s as TSchema).Check(value));
    if (!branch) throw shapeBroken(`the value of ${at || 'the answer'} does not match its schema`);
    return project(branch, value, at);
  }
  if (schema.type === 'array' || schema.items) {
    if (!Array.isArray(value)) throw shapeBroken(`the value of ${at || 'the answer'} is not an array`);
    return schema.items ? value.map((v, i) => project(schema.items!, v, `${at}/${i}`)) : value;
  }
  if (schema.type !== 'object' && !schema.properties) return scalar(typeof schema.type === 'string' ? schema.type : undefined, value, at);
  // Not an object where one belongs: fast-json-stringify wrote `{}`.
  const source = (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (source[key] !== undefined) out[key] = project(sub, source[key], `${at}/${key}`);
    else if (schema.required?.includes(key)) throw shapeBroken(`"${key}" is required in ${at || 'the answer'}`);
  }
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    for (const [key, v] of Object.entries(source)) if (!(key in out) && v !== undefined) out[key] = v;
  }
  return out;
}

/** fastify's serializer compiler: the answer cut to its schema, then JSON. */
export const typeboxSerializerCompiler: FastifySerializerCompiler<TSchema> = ({ schema }) => {
  return (data) => JSON.stringify(project(schema, data, ''));
};

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * fastify's `schemaController.compilersFactory`: given at construction, fastify never requires
 * its ajv and fast-json-stringify compilers (setting compilers on the instance would be too late).
 * fastify types the factories after ajv's; what it calls them with is what the compilers take.
 */
export const typeboxCompilersFactory = {
  buildValidator: () => typeboxValidatorCompiler,
  buildSerializer: () => typeboxSerializerCompiler,
} as unknown as CompilersFactory;
