/**
 * The data dir's layout has one home, src/config/data-layout.ts: no other file of src/ spells
 * the name of a file or folder kept under the data dir or its run, auth and TLS dirs. "Spells"
 * means in code (strings and template text), never in comments. A file's name (it has a dot or a
 * dash: `answers.log`, `local-token`) counts in any string; a folder's plain word (`run`,
 * `uploads`) only where it is a part given to `join` or `resolve`, since the same words name
 * other things (an answer's effect `run`, the config's `[uploads]` section).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { AUTH_DIR_NAMES, DATA_DIR_NAMES, RUN_DIR_NAMES, TLS_DIR_NAMES } from '../../src/config/data-layout.js';
import { resolvePaths } from '../../src/config/paths.js';
import { agentSocketPath } from '../../src/agent/wire/socket-path.js';
import { ROOT } from '../helpers/daemon.js';

const SRC = join(ROOT, 'src');
const HOME = 'src/config/data-layout.ts';
const NAMES = [DATA_DIR_NAMES, AUTH_DIR_NAMES, TLS_DIR_NAMES, RUN_DIR_NAMES].flatMap((n) => Object.values(n) as string[]);
const FILE_NAMES = NAMES.filter((n) => /[.-]/.test(n));
const FOLDER_NAMES = new Set(NAMES.filter((n) => !/[.-]/.test(n)));

/** The same words naming what is not tether's, by file, each with its reason. */
const EXCEPTIONS: Record<string, readonly string[]> = {
  // Codex's own sessions folder, in Codex's home.
  'src/agent/codex/rollout.ts': ['join(..., "sessions")'],
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Whether `text` names `name` as a whole path part (`run/agent.sock` names both). */
const namesPart = (text: string, name: string) => text.split(/[/\\\s'"`(),:]+/).includes(name);

/** Each string of `file` that spells a name of the layout, with its line. */
function spelled(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) => `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      for (const name of FILE_NAMES) if (namesPart(node.text, name)) found.push(`${at(node)} "${node.text}"`);
    }
    if (ts.isCallExpression(node) && /(^|\.)(join|resolve)$/.test(node.expression.getText(source))) {
      for (const arg of node.arguments.slice(1)) {
        if (ts.isStringLiteralLike(arg) && FOLDER_NAMES.has(arg.text)) found.push(`${at(arg)} join(..., "${arg.text}")`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the data dir layout', () => {
  it('is spelled in src/config/data-layout.ts only', () => {
    const files = filesUnder(SRC).filter((f) => relative(ROOT, f) !== HOME);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap(spelled).filter((f) => {
      const [where = '', ...rest] = f.split(' ');
      return !(EXCEPTIONS[where.replace(/:\d+$/, '')] ?? []).includes(rest.join(' '));
    });
    expect(found).toEqual([]);
  });

  it('the check finds a name spelled elsewhere (a file name in any string, a folder as a part given to join)', () => {
    const probe = join(ROOT, HOME);
    expect(spelled(probe).length).toBeGreaterThan(NAMES.length / 2);
  });

  it('the agent socket is in the run dir resolvePaths gives', () => {
    const paths = resolvePaths({ HOME: '/home/u', TETHER_DATA_DIR: '/data/t' }, 'linux');
    expect(paths.runDir).toBe('/data/t/run');
    expect(agentSocketPath(paths.runDir)).toBe('/data/t/run/agent.sock');
  });
});
