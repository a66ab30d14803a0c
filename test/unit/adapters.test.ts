/**
 * One folder per agent behind one interface, with the core holding one list of adapters
 * (docs/agents.md "Adding an agent"): every adapter of the list lives in `src/agent/<kind>/`,
 * and no agent's name or kind appears in tether's core outside that list. "Appears" means in
 * code (identifiers, strings and template text, split into words: `claudeSettings` names claude),
 * never in comments, which may say whom a rule was measured with.
 *
 * The core is everything in src/ but the adapter folders, the list itself, and `src/extension/`
 * (the in-agent half of the first adapter: its built path is what people pass to that agent).
 * The few exceptions are the product's own words, each named here with its reason.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { AGENT_ADAPTERS, DEFAULT_ADAPTER, UNNAMED_SESSION_PREFIX } from '../../src/agent/contract/adapters.js';
import { DEFAULT_AGENT_KIND, DEFAULT_SESSION_NAME } from '../../src/config/default-agent.js';
import { validateConfig } from '../../src/config/validate.js';
import { ROOT } from '../helpers/daemon.js';

const SRC = join(ROOT, 'src');

/** Words of the product itself that contain an agent's name, by file: the only ones allowed in the core. */
const EXCEPTIONS: Record<string, readonly string[]> = {
  // The package's own name.
  'src/config/version.ts': ['pi-tether'],
  // The default agent, named once (its kind, its program, its session's stem).
  'src/config/default-agent.ts': ['pi'],
  // Written by `npm run schemas` from the config's defaults, which take it from there.
  'src/config/config.checks.ts': ['pi', 'pi-main'],
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The words of an identifier or a text: `claudeSettings` -> claude, settings; `pi-main` -> pi, main. */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** Every identifier and string (template parts too) of a file that names one of `names`, with its line. */
function namesIn(file: string, names: ReadonlySet<string>): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    const text =
      ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)
        ? node.text
        : null;
    if (text !== null && words(text).some((w) => names.has(w))) {
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('one folder per agent, one list of adapters', () => {
  const names = new Set(AGENT_ADAPTERS.flatMap((a) => [a.kind, ...words(a.label), ...a.programs]));
  const folders = AGENT_ADAPTERS.map((a) => join(SRC, 'agent', a.kind));
  const outside = (file: string) =>
    !folders.some((f) => file.startsWith(`${f}/`)) &&
    file !== join(SRC, 'agent', 'contract', 'adapters.ts') &&
    !file.startsWith(join(SRC, 'extension') + '/');

  it('every adapter of the list lives in its own folder, named after its kind', () => {
    expect(AGENT_ADAPTERS.length).toBeGreaterThan(0);
    expect(new Set(AGENT_ADAPTERS.map((a) => a.kind)).size).toBe(AGENT_ADAPTERS.length);
    for (const a of AGENT_ADAPTERS) expect(existsSync(join(SRC, 'agent', a.kind, 'adapter.ts')), a.kind).toBe(true);
  });

  it("no agent's name or kind appears in the core outside the list", () => {
    const found = filesUnder(SRC)
      .filter(outside)
      .flatMap((file) => {
        const rel = relative(ROOT, file);
        const allowed = new Set(EXCEPTIONS[rel] ?? []);
        return namesIn(file, names)
          .filter((n) => !allowed.has(n.text))
          .map((n) => `${rel}:${n.line}: ${n.text.slice(0, 80)}`);
      });
    expect(found).toEqual([]);
  });

  it('the default agent is one constant: its adapter, the config defaults and the unnamed sessions all take it from there', () => {
    expect(AGENT_ADAPTERS).toContain(DEFAULT_ADAPTER);
    expect(DEFAULT_ADAPTER.kind).toBe(DEFAULT_AGENT_KIND);
    expect(DEFAULT_ADAPTER.programs).toContain(DEFAULT_AGENT_KIND);
    expect(UNNAMED_SESSION_PREFIX).toBe(DEFAULT_AGENT_KIND);
    expect(validateConfig({}, 'no file').agent).toMatchObject({ command: DEFAULT_AGENT_KIND, default_session: DEFAULT_SESSION_NAME });
    // No one picks it by its place in the list either (the list grows, its order is no meaning).
    const byPlace = filesUnder(SRC).filter((f) => /AGENT_ADAPTERS\s*\[/.test(readFileSync(f, 'utf8')));
    expect(byPlace.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('the scan finds names: in an adapter folder, and in words of a compound', () => {
    // The check above would pass on an empty scan: it must see the names where they are.
    for (const folder of folders) expect(namesIn(join(folder, 'adapter.ts'), names).length, folder).toBeGreaterThan(0);
    expect(words('claudeSettings')).toEqual(['claude', 'settings']);
    expect(words('pi-main')).toEqual(['pi', 'main']);
  });
});
