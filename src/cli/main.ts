#!/usr/bin/env node
/**
 * The `tether` executable. For `tether serve` it sets V8's flags for a daemon first (heap.ts):
 * the commands and their libraries load after that, by a dynamic import, because loading them
 * already grows the young generation. Static imports would all run before any line here.
 */
import { tuneHeapForDaemon } from '../runtime/heap.js';

const args = process.argv.slice(2);
if (args[0] === 'serve') tuneHeapForDaemon();
// Only where node cannot `require` an ES module: TypeBox, for the words of a refusal (schema-check.ts).
await (await import('../protocol/schema-check.js')).preloadTypeBoxWhereNeeded();
const { runCli } = await import('./commands.js');
await runCli(args);
