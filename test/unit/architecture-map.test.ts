/**
 * docs/architecture.md "The map" names every part of src/ with its layer, and the layers are
 * the ones the import check enforces (.dependency-cruiser.cjs): the page cannot drift from the
 * tree or from the rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.js';

/** Folder (`tmux/`) or top-level file (`errors.ts`) -> layer, from the map's table. */
function mapOfDoc(): Map<string, number> {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## The map$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/architecture.md has no "## The map" section');
  const out = new Map<string, number>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const layer = Number(cells[1]);
    if (!/^\d+$/.test(cells[1] ?? '')) continue;
    for (const [, name] of (cells[2] ?? '').matchAll(/`([^`]+)`/g)) out.set(name!, layer);
  }
  return out;
}

/** The same from the import rule's layers (scripts/layers.cjs): index = layer. */
function mapOfRule(): Map<string, number> {
  const require = createRequire(import.meta.url);
  const { LAYERS } = require(join(ROOT, 'scripts/layers.cjs')) as { LAYERS: string[][] };
  const out = new Map<string, number>();
  LAYERS.forEach((names, i) => {
    for (const n of names) out.set(n, i);
  });
  return out;
}

/** What src/ holds: `name/` for folders, `name.ts` for files. */
function tree(): string[] {
  return readdirSync(join(ROOT, 'src'), { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
}

describe('the architecture map', () => {
  it('names every folder and file at the top of src/, and nothing that is not there', () => {
    expect([...mapOfDoc().keys()].sort()).toEqual(tree().sort());
  });

  it('keeps every file of src/ at most 360 lines, the generated checks too', () => {
    const long = (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [f, readFileSync(join(ROOT, 'src', f), 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 360);
    expect(long, 'files to split by job').toEqual([]);
  });

  it('gives each the layer the import check enforces', () => {
    const rule = mapOfRule();
    const fromDoc = [...mapOfDoc()].map(([name, layer]) => [name.replace(/\/$|\.ts$/, ''), layer] as const);
    expect(new Map(fromDoc)).toEqual(rule);
  });
});
