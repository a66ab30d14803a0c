/** tether's own version, read from its package.json (shipped beside dist/): the CLI, the daemon and the pi extension each know theirs. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null = null;

export function packageVersion(): string {
  if (cached) return cached;
  const here = dirname(fileURLToPath(import.meta.url));
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(join(here, rel), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'pi-tether' && pkg.version) return (cached = pkg.version);
    } catch {
      // try the next layout (src/config under tsx, dist/config when built)
    }
  }
  return (cached = '0.0.0');
}
