/**
 * What tether keeps in tmux has one home, src/tmux/layout.ts: no other file of src/ spells the
 * name of a user option, a pane-id pattern (`%\d+`) or the refusal of a session name tether
 * cannot use. "Spells" means in code (strings, template text and regular expressions), never in
 * comments; the generated `*.checks.ts` aside. A `@word` is an option's name when it is one of
 * tether's, a `@tether-` word, inside a tmux format (`#{@x}`, `#{?@x,...}`) or handed to a call
 * that reads or writes an option; other `@` words (packages, CSS, xstate's events) are not.
 * And every option is in docs/architecture.md's table of them, which names no other.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { OPTION_NAME_RE, PANE_ID_RE, SESSION_OPTIONS } from '../../src/tmux/layout.js';
import { ROOT } from '../helpers/daemon.js';

const SRC = join(ROOT, 'src');
const HOME = 'src/tmux/layout.ts';
const OPTIONS = Object.values(SESSION_OPTIONS) as string[];

/**
 * A word that may be a user option's name inside code text: `@` and a lowercase word, not inside
 * a longer word (an address) and not followed by `/` or `.` (a scoped package, `@xstate.snapshot`).
 */
const AT_WORD = /(?<![\w@.-])@[a-z][a-z0-9-]*(?![\w@./-])/g;
/** Calls that take an option's name. */
const OPTION_CALL = /(?:^|\.)(?:(?:read|set|unset)(?:User|Session)?Option|setOption)$/;

/** Whether the `@word` at `index` of `text` names an option: one of tether's, a `@tether-` word, or one in a tmux format. */
function namesOption(text: string, word: string, index: number): boolean {
  return OPTIONS.includes(word) || word.startsWith('@tether-') || /#\{\??$/.test(text.slice(0, index));
}

/** A pattern for a pane id: `%` then a digit class. */
const PANE_PATTERN_IN_TEXT = /%(?:\\d|\[0-9\])/;
/** The words of the refusal of a session name tether cannot use. */
const NAME_REFUSAL = 'cannot be a tether session';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.checks.ts') ? [join(dir, e.name)] : [],
  );
}

/** What `file` spells of the layout in code, each with its line. */
function spelled(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) => `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const look = (node: ts.Node, text: string) => {
    for (const m of text.matchAll(AT_WORD)) if (namesOption(text, m[0], m.index)) found.push(`${at(node)} option ${m[0]}`);
    if (PANE_PATTERN_IN_TEXT.test(text)) found.push(`${at(node)} pane-id pattern ${text}`);
    if (text.includes(NAME_REFUSAL)) found.push(`${at(node)} the session-name refusal`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) look(node, node.text);
    else if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) look(node, node.getText(source));
    // Any `@word` handed to a call that reads or writes an option is one.
    if (ts.isCallExpression(node) && OPTION_CALL.test(node.expression.getText(source))) {
      for (const arg of node.arguments) {
        if (ts.isStringLiteralLike(arg) && arg.text.startsWith('@') && !namesOption(arg.text, arg.text, 0))
          found.push(`${at(arg)} option ${arg.text}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The options docs/architecture.md's table lists, in its order. */
function documentedOptions(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('What tether keeps in tmux'));
  if (!section) throw new Error('docs/architecture.md has no section "What tether keeps in tmux"');
  return [...section.matchAll(/^\| `(@[^`]+)` \|/gm)].map((m) => m[1]!);
}

describe('what tether keeps in tmux', () => {
  it('is spelled in src/tmux/layout.ts only', () => {
    const files = filesUnder(SRC).filter((f) => relative(ROOT, f) !== HOME);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(spelled)).toEqual([]);
  });

  it('the check finds each option, the pane-id pattern and the refusal where they are spelled', () => {
    const found = spelled(join(ROOT, HOME));
    for (const option of OPTIONS) expect(found.some((f) => f.endsWith(` option ${option}`))).toBe(true);
    expect(found.some((f) => f.includes(' pane-id pattern '))).toBe(true);
    expect(found.some((f) => f.endsWith(' the session-name refusal'))).toBe(true);
  });

  it('the check finds an option in a string, a format or an option call, and passes over look-alikes and comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-layout-'));
    try {
      const probe = join(dir, 'probe.ts');
      writeFileSync(
        probe,
        [
          "import x from '@scope/pkg';",
          "const a = ['@xstate.snapshot', 'user@host', '@', '@2', '@media', 'looks like @name', /[\\\\/]@scope[\\\\/]/, x];",
          "// '@created', /^%\\d+$/ and a session that cannot be a tether session, in a comment",
          "const b = ['#{@tether-pane}', `#{?@created,1,0}`, /^(%[0-9]+)$/, '#{@mine}', '@tether-new'];",
          "void setUserOption(cli, 'x', '@other', 'v');",
        ].join('\n'),
      );
      expect(spelled(probe).map((f) => f.replace(/^.*probe\.ts:/, ''))).toEqual([
        '4 option @tether-pane',
        '4 option @created',
        '4 pane-id pattern /^(%[0-9]+)$/',
        '4 option @mine',
        '4 option @tether-new',
        '5 option @other',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names each option once, in the shape of a user option', () => {
    expect(new Set(OPTIONS).size).toBe(OPTIONS.length);
    for (const option of OPTIONS) expect(option).toMatch(OPTION_NAME_RE);
    expect(PANE_ID_RE.test('%12')).toBe(true);
    expect(['%', '12', '%1;', '%1\n', ' %1'].some((p) => PANE_ID_RE.test(p))).toBe(false);
  });

  it("every option is in docs/architecture.md's table, and the table names no other", () => {
    expect(documentedOptions().sort()).toEqual([...OPTIONS].sort());
  });
});
