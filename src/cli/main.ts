#!/usr/bin/env node
/**
 * The `tether` executable. For `tether serve` it sizes V8's young generation first (heap.ts):
 * the commands and their libraries load after that, by a dynamic import, because loading them
 * is what grows it. Static imports would all run before any line of this module.
 */
import { holdYoungGeneration } from './heap.js';

const args = process.argv.slice(2);
if (args[0] === 'serve') holdYoungGeneration();
const { runCli } = await import('./commands.js');
await runCli(args);
