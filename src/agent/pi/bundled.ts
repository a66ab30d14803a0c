/**
 * The pi that ships with tether: the `@mariozechner/pi-coding-agent` dependency, or the newer
 * `@earendil-works/pi-coding-agent` where that is installed and this Node can run it. Used when
 * the configured program is `pi` and no `pi` is on PATH (docs/agents.md "pi").
 *
 * Invariant: only reads package manifests; never runs anything.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Agent packages tether can run as the bundled pi, newest first. */
const BUNDLED_PI_PACKAGES = ['@earendil-works/pi-coding-agent', '@mariozechner/pi-coding-agent'] as const;

/** The package.json of an installed package, found the way Node looks for node_modules. */
function findPackageManifest(pkg: string): string | null {
  // The agent packages export no ./package.json, so resolve by walking up instead.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', pkg, 'package.json');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The bundled pi's CLI script, or null when no installed agent package can run on this Node. */
export function bundledPi(nodeVersion = process.versions.node): string | null {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  for (const pkg of BUNDLED_PI_PACKAGES) {
    const manifestPath = findPackageManifest(pkg);
    if (!manifestPath) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: Record<string, string>; engines?: { node?: string } };
    const need = /(\d+)\.(\d+)/.exec(manifest.engines?.node ?? '');
    if (need && (major < Number(need[1]) || (major === Number(need[1]) && minor < Number(need[2])))) continue;
    const bin = manifest.bin?.pi;
    if (bin) return join(dirname(manifestPath), bin);
  }
  return null;
}
