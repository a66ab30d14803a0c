/**
 * `npm run schemas`: writes each `*.checks.ts` module from the TypeBox definitions beside it
 * (`*.schemas.ts`, and the config's builder in src/config/schema.ts): every schema as a plain
 * JSON literal and its check as standalone code (TypeBox's `Code()`), so the running daemon
 * validates without loading TypeBox (docs/architecture.md "Schemas and their checks").
 * `--check` exits 1 when a committed module differs from what its definitions give
 * (test/unit/schemas.test.ts runs the same comparison).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Type, type TSchema } from 'typebox';
import { Code } from 'typebox/compile';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One generated module: where its definitions are, which exports it carries, what it writes. */
interface GeneratedModule {
  /** The module with the TypeBox definitions (imported as types by the output). */
  readonly source: string;
  readonly out: string;
  /** The exports to carry, each a schema or a record of schemas, from the source module. */
  readonly schemas: (source: Record<string, unknown>) => Record<string, unknown>;
  /** How the output types an export: `typeof D.<name>` unless given. */
  readonly types?: Readonly<Record<string, string>>;
  /** Check each `anyOf` branch on its own too (the response serializer picks a branch with them). */
  readonly branches?: boolean;
  /**
   * A definitions module whose schemas its own generated module checks: a schema of this one
   * that is one of those (the client frames spread the inputs) gets no second copy of its check.
   */
  readonly checkedBy?: string;
  /** The refinements' functions: a named record in a module the output imports. */
  readonly rules?: { readonly name: string; readonly from: string; readonly values: (source: Record<string, unknown>) => object };
}

export const GENERATED: readonly GeneratedModule[] = [
  {
    source: 'src/protocol/input.schemas.ts',
    out: 'src/protocol/input.checks.ts',
    schemas: (m) => ({ InputSchemas: m.InputSchemas }),
  },
  {
    source: 'src/protocol/frames.schemas.ts',
    out: 'src/protocol/frames.checks.ts',
    schemas: (m) => ({
      StateFrame: m.StateFrame,
      SnapshotFrame: m.SnapshotFrame,
      SessionMetaFrame: m.SessionMetaFrame,
      ErrorFrame: m.ErrorFrame,
      AnsweredFrame: m.AnsweredFrame,
      PromptFrame: m.PromptFrame,
      ClientFrames: m.ClientFrames,
    }),
    checkedBy: 'src/protocol/input.schemas.ts',
  },
  {
    source: 'src/protocol/prompt.schemas.ts',
    out: 'src/protocol/prompt.checks.ts',
    schemas: (m) => ({ StoredPrompts: m.StoredPrompts }),
  },
  {
    source: 'src/protocol/continue.schemas.ts',
    out: 'src/protocol/continue.checks.ts',
    schemas: (m) => ({ ContinueSchedule: m.ContinueSchedule }),
  },
  {
    source: 'src/protocol/worktree.schemas.ts',
    out: 'src/protocol/worktree.checks.ts',
    schemas: (m) => ({ SessionWorktree: m.SessionWorktree }),
  },
  {
    source: 'src/restore/records.schemas.ts',
    out: 'src/restore/records.checks.ts',
    schemas: (m) => ({ SessionRecordSchema: m.SessionRecordSchema }),
  },
  {
    source: 'src/uploads/ledger.schemas.ts',
    out: 'src/uploads/ledger.checks.ts',
    schemas: (m) => ({ UploadLedgerSchema: m.UploadLedgerSchema }),
  },
  {
    source: 'src/config/schema.ts',
    out: 'src/config/config.checks.ts',
    schemas: (m) => ({ TetherConfigSchema: (m.tetherConfigSchema as (t: typeof Type) => TSchema)(Type) }),
    types: { TetherConfigSchema: 'ReturnType<typeof D.tetherConfigSchema>' },
    rules: { name: 'CONFIG_RULES', from: './schema.js', values: (m) => m.CONFIG_RULES as object },
  },
  {
    source: 'src/transport/schemas/routes.schemas.ts',
    out: 'src/transport/schemas/routes.checks.ts',
    schemas: (m) => ({ RouteSchemas: m.RouteSchemas }),
    branches: true,
  },
  {
    source: 'src/transport/schemas/session-routes.schemas.ts',
    out: 'src/transport/schemas/session-routes.checks.ts',
    schemas: (m) => ({ SessionRouteSchemas: m.SessionRouteSchemas }),
    branches: true,
  },
  {
    source: 'src/transport/schemas/answer-routes.schemas.ts',
    out: 'src/transport/schemas/answer-routes.checks.ts',
    schemas: (m) => ({ AnswerRouteSchemas: m.AnswerRouteSchemas }),
    branches: true,
  },
  {
    source: 'src/transport/schemas/changes-routes.schemas.ts',
    out: 'src/transport/schemas/changes-routes.checks.ts',
    schemas: (m) => ({ ChangesRouteSchemas: m.ChangesRouteSchemas }),
    branches: true,
  },
  {
    source: 'src/transport/schemas/usage-routes.schemas.ts',
    out: 'src/transport/schemas/usage-routes.checks.ts',
    schemas: (m) => ({ UsageRouteSchemas: m.UsageRouteSchemas }),
    branches: true,
  },
  {
    source: 'src/transport/schemas/prompt-routes.schemas.ts',
    out: 'src/transport/schemas/prompt-routes.checks.ts',
    schemas: (m) => ({ PromptRouteSchemas: m.PromptRouteSchemas }),
    branches: true,
  },
];

const isSchema = (v: unknown): v is TSchema => typeof v === 'object' && v !== null && Object.hasOwn(v, '~kind');

/** The schemas an export holds: itself, or those of a record of schemas. */
const schemasIn = (v: unknown): unknown[] =>
  isSchema(v) ? [v] : typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.values(v).filter(isSchema) : [];

/** Fails unless `value` is plain JSON that survives a round trip (no functions, no undefined, no RegExp). */
function assertJson(value: unknown, at: string): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${at}: ${value} is not JSON`);
    return;
  }
  if (Array.isArray(value)) return value.forEach((v, i) => assertJson(v, `${at}[${i}]`));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) assertJson(v, `${at}.${k}`);
    return;
  }
  throw new Error(`${at}: a ${typeof value} is not JSON`);
}

/** Every schema to check on its own: `[expression, schema]`, the expression relative to the export. */
function checkTargets(value: unknown, expr: string, branches: boolean, topLevel = true): [string, TSchema][] {
  const out: [string, TSchema][] = [];
  if (isSchema(value)) {
    if (topLevel) out.push([expr, value]);
    if (branches) out.push(...branchTargets(value, expr));
    return out;
  }
  if (typeof value !== 'object' || value === null) throw new Error(`${expr} is neither a schema nor a record of schemas`);
  for (const [k, v] of Object.entries(value)) out.push(...checkTargets(v, `${expr}[${JSON.stringify(k)}]`, branches));
  return out;
}

function branchTargets(schema: unknown, expr: string): [string, TSchema][] {
  if (typeof schema !== 'object' || schema === null) return [];
  const out: [string, TSchema][] = [];
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) s.anyOf.forEach((b, i) => out.push([`${expr}.anyOf[${i}]`, b as TSchema]));
  for (const [k, v] of Object.entries(s)) {
    if (Array.isArray(v)) v.forEach((x, i) => out.push(...branchTargets(x, `${expr}[${JSON.stringify(k)}][${i}]`)));
    else if (typeof v === 'object' && v !== null) out.push(...branchTargets(v, `${expr}[${JSON.stringify(k)}]`));
  }
  return out;
}

/** How a generated check at `out` (a path from the repo's root) imports src/protocol/schema-check.ts. */
const supportSpecifier = (out: string): string => {
  const rel = relative(dirname(out), 'src/protocol/schema-check.js');
  return rel.startsWith('.') ? rel : `./${rel}`;
};

/** TypeBox's helpers a generated check may call: src/protocol/schema-check.ts has their code. */
const SUPPORT: ReadonlySet<string> = new Set(['Guard.CodePointCount']);

/** One schema's check as an expression: TypeBox's standalone module, its externals inlined. */
function checkExpression(schema: TSchema, rules: { name: string; values: object } | undefined): { code: string; support: Set<string> } {
  const { Code: text, External } = Code(schema);
  const externals = External.variables.map((v, i) => {
    if (v instanceof RegExp) return `new RegExp(${JSON.stringify(v.source)}, ${JSON.stringify(v.flags)})`;
    const refine = v as { check?: unknown };
    const rule = rules && Object.entries(rules.values).find(([, f]) => f === refine.check)?.[0];
    if (rule === undefined) throw new Error(`external #${i} of a check is neither a RegExp nor a named rule`);
    return `{ check: ${rules!.name}.${rule} }`;
  });
  const lines = text.split('\n').filter((l) => l !== '' && l !== '// @ts-ignore' && !l.startsWith('import '));
  const body: string[] = [];
  let entry: string | undefined;
  for (const l of lines) {
    if (l === 'let External = []' || l.startsWith('export function SetExternal(')) continue;
    const m = /^export function Check\(value\) \{ return (.*) \}$/.exec(l);
    if (m) entry = m[1];
    else if (l.startsWith('const check_')) body.push(l);
    else throw new Error(`unexpected line in TypeBox's check code: ${l.slice(0, 120)}`);
  }
  if (entry === undefined) throw new Error("no Check in TypeBox's check code");
  const support = new Set<string>();
  for (const [, use] of [...body, entry].join('\n').matchAll(/\b((?:Guard|Hashing|CheckContext)\.?\w*)/g)) {
    if (use === undefined) continue;
    if (!SUPPORT.has(use)) throw new Error(`a check calls ${use}: add it to SUPPORT in scripts/schemas.ts and schema-check.ts`);
    support.add(use);
  }
  const code = `((External) => {\n${body.join('\n')}\nreturn (value) => ${entry};\n})([${externals.join(', ')}])`;
  return { code, support };
}

/** The text of one generated module. */
export async function renderChecksModule(g: GeneratedModule): Promise<string> {
  const source = (await import(pathToFileURL(join(ROOT, g.source)).href)) as Record<string, unknown>;
  const exports = g.schemas(source);
  const elsewhere = new Set<unknown>(
    g.checkedBy
      ? Object.values((await import(pathToFileURL(join(ROOT, g.checkedBy)).href)) as Record<string, unknown>).flatMap(schemasIn)
      : [],
  );
  const rules = g.rules && { name: g.rules.name, values: g.rules.values(source) };
  const support = new Set<string>();
  const literals: string[] = [];
  const checks: string[] = [];
  for (const [name, value] of Object.entries(exports)) {
    assertJson(JSON.parse(JSON.stringify(value)), name);
    const type = g.types?.[name] ?? `typeof D.${name}`;
    literals.push(`export const ${name} = ${JSON.stringify(value)} as unknown as ${type};`);
    for (const [expr, schema] of checkTargets(value, name, g.branches ?? false)) {
      if (elsewhere.has(schema)) continue;
      const c = checkExpression(schema, rules);
      c.support.forEach((s) => support.add(s));
      checks.push(`  [${expr}, ${c.code}],`);
    }
  }
  const sourceFile = g.source.split('/').pop()!;
  return [
    `// Generated by \`npm run schemas\` from ${sourceFile}; do not edit.`,
    '// @ts-nocheck -- TypeBox writes the checks as plain JavaScript; the exports are typed below.',
    `import type * as D from './${sourceFile.replace(/\.ts$/, '.js')}';`,
    ...(g.rules ? [`import { ${g.rules.name} } from '${g.rules.from}';`] : []),
    `import ${support.size > 0 ? '{ Guard, type GeneratedChecks }' : 'type { GeneratedChecks }'} from '${supportSpecifier(g.out)}';`,
    '',
    ...literals,
    '',
    '/** Each schema (and branch) above to its check. */',
    'export const CHECKS: GeneratedChecks = new Map([',
    ...checks,
    ']);',
    '',
  ].join('\n');
}

/** The generated modules whose committed text is not what their definitions give. */
export async function staleChecksModules(): Promise<string[]> {
  const stale: string[] = [];
  for (const g of GENERATED) {
    let committed = '';
    try {
      committed = readFileSync(join(ROOT, g.out), 'utf8');
    } catch {
      // missing counts as stale
    }
    if (committed !== (await renderChecksModule(g))) stale.push(g.out);
  }
  return stale;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const stale = await staleChecksModules();
    if (stale.length > 0) {
      console.error(`stale: ${stale.join(', ')}: run \`npm run schemas\``);
      process.exit(1);
    }
  } else {
    for (const g of GENERATED) writeFileSync(join(ROOT, g.out), await renderChecksModule(g));
  }
}
