/**
 * A config is filled and checked at every start without TypeBox (config/defaults.ts and the
 * generated config check): over many files, right and wrong, both must answer what TypeBox's
 * `Value.Default` and `Value.Check` answer for the config's TypeBox schema.
 */
import fc from 'fast-check';
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { CHECKS, TetherConfigSchema } from '../../src/config/config.checks.js';
import { fillDefaults } from '../../src/config/defaults.js';
import { tetherConfigSchema } from '../../src/config/schema.js';

const DEFINITION = tetherConfigSchema(Type);
const check = CHECKS.get(TetherConfigSchema)!;

/** What a TOML or JSON file can hold where a value is expected: right for some keys, wrong for the rest. */
const leaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '127.0.0.1:7777',
    '[::1]:1',
    'https://x.example',
    '/abs',
    'pi',
    'claude',
    'auto',
    'a/b',
    'ABCDEFGHIJ',
    'com.x.y',
    'bad\u0001',
  ),
  fc.integer({ min: -5, max: 2_000_000 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constant(null),
  fc.date({ noInvalidDate: false }),
  fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('awaiting-input', 'agent-exited', 'unrestorable'), fc.integer()), {
    maxLength: 4,
  }),
);

/** A value the schema node takes (for a string: its default, or a command for `agents.<name>.command`). */
function validFor(schema: unknown): fc.Arbitrary<unknown> {
  const s = schema as {
    type?: string;
    default?: unknown;
    minimum?: number;
    maximum?: number;
    items?: { type?: string; minimum?: number; maximum?: number; anyOf?: { const: string }[] };
  };
  switch (s.type) {
    case 'string':
      return fc.constant(s.default ?? 'pi --flag');
    case 'integer':
      return fc.integer({ min: s.minimum ?? 0, max: s.maximum ?? 100 });
    case 'number':
      return fc.double({ min: s.minimum ?? 0, max: s.maximum ?? 100, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (s.items?.anyOf) return fc.subarray(s.items.anyOf.map((l) => l.const));
      // Whole numbers (the usage thresholds): different ones, in their range.
      if (s.items?.type === 'integer')
        return fc.uniqueArray(fc.integer({ min: s.items.minimum ?? 0, max: s.items.maximum ?? 100 }), { maxLength: 3 });
      return fc.array(fc.constantFrom('--a', 'b c', ''), { maxLength: 3 });
    default:
      return leaf;
  }
}

/** A table shaped after the schema node: any subset of its keys, each a leaf, a nested table or something else, and now and then an unknown key. */
function tableFor(schema: unknown, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema as { properties?: Record<string, unknown> }).properties;
  const named = Object.values((schema as { patternProperties?: Record<string, unknown> }).patternProperties ?? {})[0];
  if (depth > 2 || (properties === undefined && named === undefined))
    return fc.oneof({ weight: 40, arbitrary: validFor(schema) }, { weight: 1, arbitrary: leaf });
  const value = (sub: unknown) => fc.oneof({ weight: 40, arbitrary: tableFor(sub, depth + 1) }, { weight: 1, arbitrary: leaf });
  const keys = properties ?? { pi: named, 'my agent': named, claude: named };
  const record = fc.record(Object.fromEntries(Object.entries(keys).map(([k, sub]) => [k, value(sub)])), { requiredKeys: [] });
  return fc.oneof(
    { weight: 60, arbitrary: record },
    { weight: 1, arbitrary: fc.tuple(record, fc.constantFrom('agnet', 'Ring_KB', 'zz'), leaf).map(([r, k, v]) => ({ ...r, [k]: v })) },
    { weight: 1, arbitrary: fc.array(leaf, { maxLength: 2 }) },
  );
}

describe('the config filled and checked without TypeBox', () => {
  it('fills every config as Value.Default does, and checks it as Value.Check does', () => {
    let valid = 0;
    fc.assert(
      fc.property(tableFor(TetherConfigSchema, 0), (raw) => {
        const ours = fillDefaults(TetherConfigSchema, structuredClone(raw));
        const theirs: unknown = Value.Default(DEFINITION as TSchema, structuredClone(raw));
        expect(ours).toEqual(theirs);
        const fits = Value.Check(DEFINITION as TSchema, theirs);
        expect(check(ours)).toBe(fits);
        if (fits) valid++;
      }),
      { numRuns: 3000, seed: 20261126 },
    );
    // The corpus reaches both answers: many files are valid once filled, many are not.
    expect(valid).toBeGreaterThan(150);
    expect(valid).toBeLessThan(2700);
  });

  it('fills an empty file with every default', () => {
    const filled = fillDefaults(TetherConfigSchema, {});
    expect(filled).toEqual(Value.Default(DEFINITION as TSchema, {}));
    expect(check(filled)).toBe(true);
  });
});
