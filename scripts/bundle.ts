/**
 * The second half of `npm run build`: after tsc has emitted dist/, bundles the `tether`
 * executable (src/cli/main.ts and everything it imports, its libraries included) into one
 * minified dist/cli/main.js, in place of tsc's. A daemon loaded from ~470 module files held
 * each one's source text, module record and namespace in V8's heap for its whole life; one
 * file without comments or whitespace holds a fraction (docs/benchmarks.md "Memory").
 *
 * Everything else stays tsc's: the pi extension, the agent hooks and the history search
 * worker are their own entry points, loaded from dist/ by path.
 *
 * Identifiers are minified too (keeping them costs ~4 MB resident, measured; esbuild's
 * keepNames costs more than it saves). So a stack trace in the log names minified functions:
 * dist/cli/main.js.map maps it back to the sources (`node --enable-source-maps`), and the log's
 * error type is the error's own name (src/cli/logger.ts), which tether's errors all set.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Packages the daemon loads only on demand, if ever, left out of the bundle so their source
 * is not read with it: fastify's ajv and fast-json-stringify compilers (replaced by
 * src/transport/schema-compilers.ts) and fastify's inject, the certificate generator (first
 * TLS start), the APNs token signer (push only), pino-pretty (a terminal only). They still
 * load from node_modules when asked for.
 */
const ON_DEMAND = [
  'ajv',
  'ajv-formats',
  'fast-json-stringify',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'light-my-request',
  'selfsigned',
  'jose',
  'pino-pretty',
];

/**
 * The bundled libraries are CommonJS inside an ES module: their `require` of node's own
 * modules needs a real `require`, made here for the bundle's place.
 */
const BANNER = "import { createRequire as __tetherRequire } from 'node:module';\nconst require = __tetherRequire(import.meta.url);";

await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/main.js',
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  external: ON_DEMAND,
  banner: { js: BANNER },
  logLevel: 'warning',
});
