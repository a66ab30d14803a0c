/**
 * The generated checks (`*.checks.ts`, `npm run schemas`) stand in for TypeBox in the daemon:
 * they must be what the TypeBox definitions give today, answer exactly as TypeBox's compiled
 * checks do, and their JSON schemas must make TypeBox word a refusal exactly as the
 * definitions do (the error paths compile the JSON schema).
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { GENERATED, staleChecksModules } from '../../scripts/schemas.js';
import { PUSH_EVENTS } from '../../src/config/schema.js';
import { TetherConfigSchema } from '../../src/config/config.checks.js';
import type { GeneratedChecks } from '../../src/protocol/schema-check.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Every object node of a generated JSON schema with the definition node it was written from. */
function pairNodes(generated: unknown, definition: unknown, out = new Map<object, unknown>()): Map<object, unknown> {
  if (typeof generated !== 'object' || generated === null) return out;
  out.set(generated, definition);
  for (const k of Object.keys(generated))
    pairNodes((generated as Record<string, unknown>)[k], (definition as Record<string, unknown>)[k], out);
  return out;
}

const WRONG: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  NaN,
  '',
  'x',
  'a'.repeat(70),
  '\u0000',
  '😀'.repeat(33),
  [],
  ['x'],
  {},
  { zz: 1 },
];

/** Values at the schema's bounds: strings of each length limit and around it (in code points too), numbers at each limit. */
function boundaries(schema: unknown, out: unknown[] = []): unknown[] {
  if (typeof schema !== 'object' || schema === null) return out;
  const s = schema as Record<string, unknown>;
  for (const k of ['maxLength', 'minLength'])
    if (typeof s[k] === 'number') {
      const n = s[k];
      out.push('a'.repeat(n), 'a'.repeat(n + 1), 'a'.repeat(Math.max(n - 1, 0)), '😀'.repeat(n), '😀'.repeat(n + 1));
    }
  for (const k of ['minimum', 'maximum']) if (typeof s[k] === 'number') out.push(s[k], s[k] - 1, s[k] + 1, s[k] + 0.5);
  for (const v of Object.values(s)) boundaries(v, out);
  return out;
}

/** Values around a schema: one TypeBox makes, each field set wrong or left out, an unknown field, and arbitrary ones. */
function corpus(definition: TSchema, seed: number): unknown[] {
  const WRONG_HERE = [...WRONG, ...boundaries(definition)];
  const out: unknown[] = [...WRONG_HERE];
  let base: unknown;
  try {
    base = Value.Create(definition);
  } catch {
    base = undefined; // a pattern TypeBox cannot make a value for
  }
  out.push(base);
  if (base !== null && typeof base === 'object' && !Array.isArray(base)) {
    const b = base as Record<string, unknown>;
    out.push({ ...b, zz: 1 });
    for (const k of Object.keys(b)) {
      const { [k]: _, ...without } = b;
      out.push(without);
      for (const w of WRONG_HERE) out.push({ ...b, [k]: w });
    }
  }
  if (Array.isArray(base)) out.push([...(base as unknown[]), ...WRONG_HERE]);
  out.push(...fc.sample(fc.anything({ withNullPrototype: false }), { numRuns: 100, seed }));
  out.push(...fc.sample(fc.jsonValue(), { numRuns: 100, seed }));
  return out;
}

describe('the generated schema checks', () => {
  it('are what the TypeBox definitions give (else: run `npm run schemas` and commit)', async () => {
    expect(await staleChecksModules(), 'stale generated checks: run `npm run schemas` and commit the result').toEqual([]);
  });

  for (const g of GENERATED) {
    it(`${g.out}: each check answers as TypeBox's, and TypeBox words a refusal the same from its JSON schema`, async () => {
      const source = (await import(pathToFileURL(join(ROOT, g.source)).href)) as Record<string, unknown>;
      const generated = (await import(pathToFileURL(join(ROOT, g.out)).href)) as Record<string, unknown> & { CHECKS: GeneratedChecks };
      const definitions = g.schemas(source);
      const nodes = new Map<object, unknown>();
      for (const [name, definition] of Object.entries(definitions)) pairNodes(generated[name], definition, nodes);
      expect(generated.CHECKS.size).toBeGreaterThan(0);
      let compared = 0;
      let refused = 0;
      for (const [literal, check] of generated.CHECKS) {
        const definition = nodes.get(literal) as TSchema;
        expect(definition, JSON.stringify(literal).slice(0, 120)).toBeDefined();
        const typebox = Compile(definition);
        const fromJson = Compile(literal as TSchema);
        for (const value of corpus(definition, compared)) {
          const fits = typebox.Check(value);
          expect(check(value), `${JSON.stringify(literal).slice(0, 120)} with ${String(JSON.stringify(value)).slice(0, 120)}`).toBe(fits);
          compared++;
          if (fits) continue;
          refused++;
          // The config's refusals are worded from its TypeBox schema itself (load.ts); every other from the JSON one.
          if (g.rules === undefined) expect(fromJson.Errors(value)).toEqual(typebox.Errors(value));
        }
      }
      expect(compared).toBeGreaterThan(200);
      expect(refused).toBeGreaterThan(compared / 2);
    });
  }

  it("the config's push events are PUSH_EVENTS, in its order", () => {
    const events = TetherConfigSchema.properties.push.properties.events;
    expect((events.items as unknown as { anyOf: { const: string }[] }).anyOf.map((l) => l.const)).toEqual([...PUSH_EVENTS]);
    expect((events as unknown as { default: unknown }).default).toEqual([...PUSH_EVENTS]);
  });

  it('a check of a schema made at run time (not generated) is still TypeBox', async () => {
    const { checkOf } = await import('../../src/protocol/schema-check.js');
    const schema = Type.Object({ a: Type.String({ maxLength: 2 }) });
    const c = checkOf(new Map(), schema);
    expect(c.Check({ a: 'ok' })).toBe(true);
    expect(c.Check({ a: 'long' })).toBe(false);
    expect(c.Errors({ a: 'long' })).toEqual(Compile(schema).Errors({ a: 'long' }));
  });
});
