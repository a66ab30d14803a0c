/**
 * Fills a config's missing keys from its JSON schema's `default` annotations: what TypeBox's
 * `Value.Default` does, over the plain JSON schema the daemon loads (config.checks.ts), so a
 * start does not load TypeBox (docs/architecture.md "Schemas and their checks").
 *
 * Invariant: the result equals `Value.Default(schema, value)` for the config's schema and any
 * value (test/unit/config-defaults.test.ts). Like it, this changes `value` in place and returns
 * it; like it, a value of the wrong shape is left as it is for the check to refuse. A schema
 * shape it does not follow (an intersection, a reference, defaults inside a union) throws
 * rather than fill differently.
 */

/** The parts of a JSON schema that defaults travel through. */
interface DefaultsSchema {
  readonly type?: unknown;
  readonly default?: unknown;
  readonly properties?: Readonly<Record<string, DefaultsSchema>>;
  readonly patternProperties?: Readonly<Record<string, DefaultsSchema>>;
  readonly additionalProperties?: unknown;
  readonly items?: DefaultsSchema;
  readonly anyOf?: readonly DefaultsSchema[];
  readonly allOf?: unknown;
  readonly $ref?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** `value` with the schema's defaults where it has nothing (undefined). */
export function fillDefaults(schema: DefaultsSchema, value: unknown): unknown {
  if (schema.allOf !== undefined || schema.$ref !== undefined) throw new Error('fillDefaults: allOf and $ref are not followed');
  const v = 'default' in schema && value === undefined ? structuredClone(schema.default) : value;
  if (schema.anyOf !== undefined) return fromUnion(schema.anyOf, v);
  if (schema.type === 'array' && isObject(schema.items) && !Array.isArray(schema.items)) return fromArray(schema.items, v);
  if (schema.type === 'object' && schema.properties !== undefined) return fromObject(schema, schema.properties, v);
  if (schema.type === 'object' && schema.patternProperties !== undefined) return fromRecord(schema.patternProperties, v);
  return v;
}

function fromArray(items: DefaultsSchema, value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  for (let i = 0; i < value.length; i++) value[i] = fillDefaults(items, value[i]);
  return value;
}

function fromObject(schema: DefaultsSchema, properties: Readonly<Record<string, DefaultsSchema>>, value: unknown): unknown {
  if (!isObject(value)) return value;
  const known = Object.getOwnPropertyNames(properties);
  for (const key of known) {
    const property = properties[key]!;
    const filled = fillDefaults(property, value[key]);
    // Nothing to put there: leave the key out rather than set it to undefined.
    if (filled === undefined && !('default' in property)) continue;
    value[key] = filled;
  }
  if (isObject(schema.additionalProperties)) {
    const extra = schema.additionalProperties as DefaultsSchema;
    for (const key of Object.getOwnPropertyNames(value)) if (!known.includes(key)) value[key] = fillDefaults(extra, value[key]);
  }
  return value;
}

/** A table of named tables: each name's table gets its defaults when the schema gives the table one. */
function fromRecord(patterns: Readonly<Record<string, DefaultsSchema>>, value: unknown): unknown {
  if (!isObject(value)) return value;
  const [pattern, each] = Object.entries(patterns)[0] ?? [];
  if (pattern === undefined || each === undefined || !('default' in each)) return value;
  const key = new RegExp(pattern);
  for (const k of Object.getOwnPropertyNames(value)) if (key.test(k)) value[k] = fillDefaults(each, value[k]);
  return value;
}

/** A union whose branches hold no defaults leaves the value as it is (TypeBox gives back an equal copy). */
function fromUnion(branches: readonly DefaultsSchema[], value: unknown): unknown {
  if (JSON.stringify(branches).includes('"default":')) throw new Error('fillDefaults: defaults inside a union are not followed');
  return value;
}
