/**
 * Where the built tether CLI is, for the tests and the benchmarks alike: both run the daemon
 * as a user does (`dist/cli/main.js`), never the sources.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The built CLI (`npm run build` makes it). */
export const CLI = join(ROOT, 'dist/cli/main.js');
