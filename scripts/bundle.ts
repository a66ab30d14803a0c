/**
 * `npm run build`'s emit (after tsc's type check there; `npm test` checks the types in a step of
 * its own, beside the build): dist/ from src/.
 *
 * First every module of src/ is transpiled alone into dist/, with its source map: esbuild's
 * transform, which tsconfig.json's `isolatedModules` and `verbatimModuleSyntax` make equal to
 * tsc's emit of the same file (types erased, imports kept as written), in about a second where
 * tsc's emit took 8 s of CPU. Then the `tether` executable (src/cli/main.ts and everything it
 * imports, its libraries included) is bundled into one minified dist/cli/main.js, in place of
 * its transpiled file. A daemon loaded from ~470 module files held each one's source text,
 * module record and namespace in V8's heap for its whole life; one file without comments or
 * whitespace holds a fraction (docs/benchmarks.md "Memory").
 *
 * The mDNS worker (src/mdns/advertise-worker.ts) is bundled the same way, into its own file in
 * place of its transpiled one (below). Everything else stays file by file: the pi extension, the
 * agent hooks and the history search worker are their own entry points, loaded from dist/ by path.
 *
 * Identifiers are minified too (keeping them costs ~4 MB resident, measured; esbuild's
 * keepNames costs more than it saves). So a stack trace in the log names minified functions:
 * dist/cli/main.js.map maps it back to the sources (`node --enable-source-maps`), and the log's
 * error type is the error's own name (src/runtime/logger.ts), which tether's errors all set.
 */
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Packages the daemon loads only on demand, if ever, left out of the bundle so their source
 * is not read with it: fastify's ajv and fast-json-stringify compilers (replaced by
 * src/transport/schema-compilers.ts) and fastify's inject, the certificate generator (first
 * TLS start), the APNs token signer (push only), pino-pretty (a terminal only), TypeBox (the
 * daemon checks with generated code and loads TypeBox only to word a refusal:
 * src/protocol/schema-check.ts). They still load from node_modules when asked for.
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
  'typebox',
];

/**
 * The bundled libraries are CommonJS inside an ES module: their `require` of node's own
 * modules needs a real `require`, made here for the bundle's place.
 */
const BANNER = "import { createRequire as __tetherRequire } from 'node:module';\nconst require = __tetherRequire(import.meta.url);";

/** How both bundles are built: one minified ES module for node 20, its map beside it, the banner on top. */
const NODE_BUNDLE = {
  absWorkingDir: ROOT,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  banner: { js: BANNER },
  logLevel: 'warning',
} satisfies BuildOptions;

/**
 * fastify requires node:http2 when it loads but uses it only for its `http2` option, which
 * tether never sets; node's HTTP/2 (with what it pulls in) is ~4.7 MB resident. fastify gets
 * this stand-in, which loads the real module the first time one of its functions is called.
 */
const LAZY_HTTP2 = `
let http2;
const real = () => (http2 ??= require('node:http2'));
module.exports = {
  createServer: (...args) => real().createServer(...args),
  createSecureServer: (...args) => real().createSecureServer(...args),
};`;

const lazyHttp2ForFastify: Plugin = {
  name: 'lazy-http2-for-fastify',
  setup(b) {
    // A fastify that uses more of http2 than the stand-in has fails the build, not the daemon.
    const fastifyServer = readFileSync(join(ROOT, 'node_modules/fastify/lib/server.js'), 'utf8');
    const used = new Set(fastifyServer.match(/(?<![\w.])http2\.\w+(?=\()/g));
    const unknown = [...used].filter((u) => !['http2.createServer', 'http2.createSecureServer'].includes(u));
    if (unknown.length > 0) throw new Error(`fastify calls ${unknown.join(', ')}: extend LAZY_HTTP2 in scripts/bundle.ts`);
    b.onResolve({ filter: /^node:http2$/ }, (args) =>
      /[\\/]fastify[\\/]lib[\\/]server\.js$/.test(args.importer) ? { path: 'lazy-http2', namespace: 'tether' } : undefined,
    );
    b.onLoad({ filter: /^lazy-http2$/, namespace: 'tether' }, () => ({ contents: LAZY_HTTP2, loader: 'js' }));
  },
};

/** Every TypeScript module of src/, as paths from the project's root. */
const SOURCES = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => join('src', f));

await build({
  absWorkingDir: ROOT,
  entryPoints: SOURCES,
  outdir: 'dist',
  outbase: 'src',
  bundle: false,
  platform: 'node',
  format: 'esm',
  // tsconfig.json's target: nothing of the sources is rewritten for an older runtime.
  target: 'es2023',
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
});

for (const f of readdirSync(join(ROOT, 'dist/cli'))) if (f.startsWith('chunk-')) rmSync(join(ROOT, 'dist/cli', f));

await build({
  ...NODE_BUNDLE,
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist/cli',
  // What the code imports on demand (the daemon for `serve`, the push client, the QR code, ...)
  // stays a file of its own, loaded then. Beside main.js, so paths made from import.meta.url
  // ('../../docs/...') mean the same in every file.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  external: ON_DEMAND,
  plugins: [lazyHttp2ForFastify],
});

/**
 * The mDNS worker, with its responder library (@homebridge/ciao) and what that requires, in one
 * minified file: a worker that loads them file by file holds ~11 MB more (docs/benchmarks.md
 * "Memory"). The library's `source-map-support/register` is left out: it loads a source-map
 * parser to rewrite stack traces, which the daemon maps itself (`--enable-source-maps`).
 */
const noStackTraceHook: Plugin = {
  name: 'no-stack-trace-hook',
  setup(b) {
    b.onResolve({ filter: /^source-map-support\/register$/ }, () => ({ path: 'no-stack-trace-hook', namespace: 'tether' }));
    b.onLoad({ filter: /^no-stack-trace-hook$/, namespace: 'tether' }, () => ({ contents: '', loader: 'js' }));
  },
};

await build({
  ...NODE_BUNDLE,
  entryPoints: ['src/mdns/advertise-worker.ts'],
  outfile: 'dist/mdns/advertise-worker.js',
  plugins: [noStackTraceHook],
});
