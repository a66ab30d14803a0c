/**
 * A schema's check without TypeBox at hand: the generated check (`*.checks.ts`, written by
 * `npm run schemas` from the TypeBox definitions in `*.schemas.ts`) answers whether a value
 * fits. TypeBox itself is loaded only on the path where a value does not fit and its errors
 * are wanted, so a message keeps TypeBox's words while the running daemon never loads TypeBox
 * on its normal paths (docs/architecture.md "Schemas and their checks").
 *
 * Invariant: `Check` answers what TypeBox's compiled check answers for the same schema
 * (test/unit/schemas.test.ts); `Errors` is TypeBox's own.
 */
import { createRequire } from 'node:module';
import type { Static, TSchema } from 'typebox';
import type * as TypeBox from 'typebox';
import type * as TypeBoxCompile from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import type * as TypeBoxValue from 'typebox/value';

/**
 * TypeBox's helpers that generated checks call, with TypeBox's own code, so a check needs no
 * part of TypeBox: the Unicode code points of a string, a surrogate pair counted once.
 */
export const Guard = {
  CodePointCount(value: string): number {
    let result = 0;
    let index = 0;
    let prev = 0;
    while (index < value.length) {
      const next = value.charCodeAt(index++) >> 0xa;
      result += +(((prev << 8) | next) !== 0x3637);
      prev = next;
    }
    return result;
  },
};

/** What a generated module holds: each of its schemas (and the branches it checks alone) to its check. */
export type GeneratedChecks = ReadonlyMap<object, (value: unknown) => boolean>;

/** A schema's check and, on demand, TypeBox's errors for a value that fails it. */
export interface SchemaCheck<T = unknown> {
  Check(value: unknown): value is T;
  Errors(value: unknown): TLocalizedValidationError[];
}

type Entry = 'typebox' | 'typebox/compile' | 'typebox/value';

// Synchronous, so an error path stays a plain function: node 20.19 and later (22.12 on the 22
// line) `require` an ES module, and say nothing doing it.
const requireEntry = createRequire(import.meta.url);
/** TypeBox's entries imported ahead, where node cannot `require` them (preloadTypeBoxWhereNeeded). */
const imported = new Map<Entry, unknown>();
const load = (entry: Entry): unknown => imported.get(entry) ?? requireEntry(entry);

/**
 * Node 22.0 to 22.11 cannot `require` an ES module (not without a flag): there TypeBox is
 * imported at start instead. Nothing elsewhere.
 */
export async function preloadTypeBoxWhereNeeded(): Promise<void> {
  if ((process.features as { require_module?: boolean }).require_module !== false) return;
  const [root, compile, value] = await Promise.all([import('typebox'), import('typebox/compile'), import('typebox/value')]);
  imported.set('typebox', root).set('typebox/compile', compile).set('typebox/value', value);
}

/** TypeBox's type builder (`Type`), loaded the first time it is asked for. */
export function typeboxType(): typeof TypeBox.Type {
  return (load('typebox') as typeof TypeBox).Type;
}

/** TypeBox's compiler, loaded the first time it is asked for. */
export function typeboxCompile(): typeof TypeBoxCompile {
  return load('typebox/compile') as typeof TypeBoxCompile;
}

/** TypeBox's value functions (`Errors`, `Default`), loaded the first time they are asked for. */
export function typeboxValue(): typeof TypeBoxValue {
  return load('typebox/value') as typeof TypeBoxValue;
}

/**
 * The check of `schema`: its generated one from `checks`, else (a schema built at run time,
 * as in tests) TypeBox's compiled one. Errors always come from TypeBox, compiled once.
 */
export function checkOf<S extends TSchema>(checks: GeneratedChecks, schema: S): SchemaCheck<Static<S>> {
  let compiled: ReturnType<typeof TypeBoxCompile.Compile<S>> | undefined;
  const typebox = (): ReturnType<typeof TypeBoxCompile.Compile<S>> => (compiled ??= typeboxCompile().Compile(schema));
  const generated = checks.get(schema);
  return {
    Check: (generated ?? ((value: unknown) => typebox().Check(value))) as (value: unknown) => value is Static<S>,
    Errors: (value) => typebox().Errors(value),
  };
}
