/**
 * Values for a JSON schema (the subset tether's TypeBox schemas use: objects, strings with
 * patterns and lengths, literals, unions, integers, null), as fast-check arbitraries: values
 * that fit, and the values a hostile peer sends instead: hostile text in every string, wrong
 * types, fields missing or added, lengths one past the limit.
 *
 * Invariant: `fitting` only makes values the schema accepts, so an answer to one of them that is
 * a refusal is a finding, not noise; everything else comes from `hostileValue`.
 */
import fc from 'fast-check';

/** The JSON schema keywords read here. */
export interface JsonSchema {
  readonly type?: string;
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
}

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/** A string the schema accepts (length in code points, as TypeBox counts). */
function fittingString(s: JsonSchema, text: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Number.MAX_SAFE_INTEGER;
  const len = (v: string) => [...v].length;
  const re = s.pattern === undefined ? null : new RegExp(s.pattern, 'u');
  const fits = (v: string) => len(v) >= min && len(v) <= max && (re === null || re.test(v));
  // Hostile text seldom fits a pattern: a filter would spin; the pattern's own strings are made.
  if (re !== null) return fc.stringMatching(re).filter(fits);
  return fc.oneof(
    { weight: 3, arbitrary: text.filter(fits) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 64) }).filter(fits) },
  );
}

/** A value `s` accepts; strings drawn from `text` where the schema lets them through. */
export function fitting(s: JsonSchema, text: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.anyOf) return fc.oneof(...s.anyOf.map((b) => fitting(b, text)));
  switch (s.type) {
    case 'string':
      return fittingString(s, text);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(s.items ? fitting(s.items, text) : anyJson, { maxLength: 3 });
    case 'object': {
      const props = s.properties ?? {};
      const required = new Set(s.required ?? []);
      const keys = Object.keys(props);
      if (keys.length === 0) return fc.constant({});
      return fc.record(Object.fromEntries(keys.map((k) => [k, fitting(props[k]!, text)])), {
        requiredKeys: keys.filter((k) => required.has(k)),
      });
    }
    default:
      return anyJson;
  }
}

/** A value of another type than `s` wants (or of no type it names). */
function wrongType(s: JsonSchema): fc.Arbitrary<unknown> {
  const wants = s.type;
  const all: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.string({ maxLength: 8 })],
    ['integer', fc.oneof(fc.integer(), fc.constantFrom(-1, 2 ** 53, -0))],
    ['number', fc.constantFrom(1.5, 1e300, -1e-300)],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(anyJson, { maxLength: 2 })],
    ['object', fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 2 })],
  ];
  const others = all.filter(([t]) => t !== wants && !(wants === 'number' && t === 'integer')).map(([, a]) => a);
  return fc.oneof(...others);
}

/** A string just past the schema's limits, or one that breaks its pattern. */
function pastLimits(s: JsonSchema, text: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [text];
  if (s.maxLength !== undefined) options.push(fc.constantFrom('x', '\u00e9', '\ud83d\ude00').map((c) => c.repeat(s.maxLength! + 1)));
  if ((s.minLength ?? 0) > 0) options.push(fc.constant(''));
  return fc.oneof(...options);
}

/**
 * What a hostile peer sends where `s` is expected: mostly a value of the right shape with
 * hostile strings, else a wrong type, a limit crossed, a field dropped or added.
 */
export function hostileValue(s: JsonSchema, text: fc.Arbitrary<string>, depth = 0): fc.Arbitrary<unknown> {
  if (s.anyOf && depth < 3) return fc.oneof(...s.anyOf.map((b) => hostileValue(b, text, depth + 1)), wrongType(s));
  if (s.type === 'string' || (s.type === undefined && (s.const !== undefined || s.enum !== undefined)))
    return fc.oneof(
      { weight: 4, arbitrary: pastLimits(s, text) },
      { weight: 1, arbitrary: wrongType(s) },
      { weight: 2, arbitrary: fitting(s, text) },
    );
  if (s.type === 'object' && depth < 3) {
    const props = s.properties ?? {};
    const keys = Object.keys(props);
    const fields = fc.record(
      Object.fromEntries(keys.map((k) => [k, fc.oneof(fitting(props[k]!, text), hostileValue(props[k]!, text, depth + 1))])),
      {
        requiredKeys: [],
      },
    );
    const extra = fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'token', ''), text), anyJson);
    return fc.oneof(
      { weight: 4, arbitrary: fields },
      { weight: 1, arbitrary: fc.tuple(fields, extra).map(([o, [k, v]]) => withOwn(o, k, v)) },
      { weight: 1, arbitrary: wrongType(s) },
    );
  }
  return fc.oneof(fitting(s, text), wrongType(s));
}

/** `o` with an own property `k` (even `__proto__`, as JSON.parse makes one). */
function withOwn(o: object, k: string, v: unknown): object {
  return JSON.parse(
    `${JSON.stringify(o).slice(0, -1)}${Object.keys(o).length > 0 ? ',' : ''}${JSON.stringify(k)}:${JSON.stringify(v)}}`,
  ) as object;
}
