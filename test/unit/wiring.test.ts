/**
 * The composition root's lint covers every wiring file wherever it would live: wiring is what
 * constructs a service (a `*Service` class) or starts a service room's part (a `start*` or
 * `connect*` function of src/service/), and it lives in src/daemon/ (docs/architecture.md "The
 * map"), every file of which the lint holds to constructing and connecting (eslint.config.js).
 * A file elsewhere that wires is found here, by reading every file of src/ as TypeScript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.js';

const SRC = join(ROOT, 'src');
const DAEMON = 'daemon/';

const sourceFiles = (): string[] =>
  (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.checks.ts')).sort();

/** Each name a file imports (statically, or from a dynamic `import()` it destructures), with the src path it comes from. */
function importsOf(file: string, source: ts.SourceFile): Map<string, string> {
  const from = (spec: string): string => relative(SRC, resolve(dirname(join(SRC, file)), spec)).replace(/\.js$/, '.ts');
  const out = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text.startsWith('.')) {
      const bindings = node.importClause?.isTypeOnly ? undefined : node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements) if (!el.isTypeOnly) out.set(el.name.text, from(node.moduleSpecifier.text));
    }
    // const [{ A }, { B }] = await Promise.all([import('./a.js'), import('./b.js')]) and const { A } = await import('./a.js')
    if (ts.isVariableDeclaration(node) && node.initializer) {
      const specs: string[] = [];
      const collect = (n: ts.Node): void => {
        if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(n.arguments[0]!))
          specs.push(n.arguments[0].text);
        ts.forEachChild(n, collect);
      };
      collect(node.initializer);
      const patterns = ts.isArrayBindingPattern(node.name) ? node.name.elements : [node.name];
      patterns.forEach((p, i) => {
        const spec = specs[i];
        const pattern = ts.isBindingElement(p) ? p.name : ts.isOmittedExpression(p) ? null : p;
        if (spec === undefined || pattern === null || !ts.isObjectBindingPattern(pattern)) return;
        for (const el of pattern.elements) if (ts.isIdentifier(el.name)) out.set(el.name.text, from(spec));
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** What `file` constructs or starts that only wiring may: `new XService(...)`, `startX(...)`/`connectX(...)` of src/service/. */
function wiringIn(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(SRC, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const imported = importsOf(file, source);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && /Service$/.test(node.expression.text)) {
      const origin = imported.get(node.expression.text);
      if (origin !== undefined && origin !== file) found.push(`new ${node.expression.text} (${origin})`);
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && /^(start|connect)[A-Z]/.test(node.expression.text)) {
      const origin = imported.get(node.expression.text);
      if (origin?.startsWith('service/')) found.push(`${node.expression.text}() (${origin})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('wiring', () => {
  it('is found by this test: a file that constructs a service or starts a service room part, statically or loaded later', () => {
    // The root itself and the push wiring (which loads push only when it is configured) are found.
    expect(wiringIn('daemon/root.ts')).toEqual(expect.arrayContaining(['new SessionsService (service/sessions/sessions.service.ts)']));
    expect(wiringIn('daemon/push.ts')).toEqual(
      expect.arrayContaining(['new PushService (push/push.service.ts)', 'startPushTrigger() (service/alerts/push-trigger.ts)']),
    );
  });

  it('lives in src/daemon/ only', () => {
    const outside = sourceFiles()
      .filter((f) => !f.startsWith(DAEMON))
      .map((f) => [f, wiringIn(f)] as const)
      .filter(([, found]) => found.length > 0);
    expect(outside, 'wiring outside src/daemon/: move it there (its rules stay in their rooms)').toEqual([]);
  });

  it("is every file of src/daemon/, each held by the root's lint to constructing and connecting", async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const unheld: string[] = [];
    for (const f of sourceFiles().filter((f) => f.startsWith(DAEMON))) {
      const config = (await eslint.calculateConfigForFile(join(SRC, f))) as { rules?: Record<string, unknown> };
      const selectors = JSON.stringify(config.rules?.['no-restricted-syntax'] ?? []);
      for (const s of ['IfStatement', 'ConditionalExpression', "LogicalExpression[operator='&&']", 'ForOfStatement'])
        if (!selectors.includes(s)) unheld.push(`${f}: ${s}`);
    }
    expect(unheld).toEqual([]);
  });
});
