/**
 * The world a fuzzed daemon lives in, shared by the test and the benchmark: a folder for the
 * canaries, an agent that is no shell (a program that takes every byte of its terminal raw and
 * writes it to a file, so input can be found exactly as the pane got it and nothing typed is ever
 * run), the config that runs it over TLS, and the target and probes the fuzzer needs once the
 * daemon is up.
 *
 * Invariant: only what this module made is removed, and its process listeners are taken off
 * again by `detach`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../built-cli.js';
import type { ensureCertificate } from '../../src/auth/certificate.js';
import { PairingStore } from '../../src/auth/pairing-store.js';
import { TokenStore } from '../../src/auth/token-store.js';
import type { FuzzProbes } from './run.js';
import type { FuzzRoute, FuzzTarget } from './target.js';

/** The one session the fuzzer types into (never deleted by it). */
export const FUZZ_SESSION = 'fz';

/** The pane's program: raw mode (no line discipline: ^C, ^D and Enter are bytes), every byte to a file of its pane. */
const SINK = `const fs = require('node:fs');
const out = process.argv[2] + '-' + String(process.env.TMUX_PANE || process.pid).replace(/\\W/g, '');
let fd = null;
process.stdin.setRawMode(true);
process.stdout.write('sink-ready\\n');
process.stdin.on('data', (d) => { fd = fd ?? fs.openSync(out, 'a'); fs.writeSync(fd, d); });
`;

export interface FuzzWorld {
  readonly dir: string;
  readonly canaryDir: string;
  /** The config's lines for the fuzzed daemon (TLS on, the sink as its agent). */
  readonly toml: string;
  /** The file holding what a pane's program read, by tmux pane id. */
  sinkFile(paneId: string): string;
  cleanup(): void;
}

export function fuzzWorld(): FuzzWorld {
  const dir = mkdtempSync(join(tmpdir(), 'tether-fuzz-'));
  const canaryDir = mkdtempSync(join(tmpdir(), 'tether-canary-'));
  const sink = join(dir, 'sink.cjs');
  writeFileSync(sink, SINK);
  const prefix = join(dir, 'pane');
  const command = `${process.execPath} ${sink} ${prefix}`;
  return {
    dir,
    canaryDir,
    toml: `tls = true\n[agent]\ncommand = ${JSON.stringify(command)}\ndefault_session = "${FUZZ_SESSION}"\n`,
    sinkFile: (paneId) => `${prefix}-${paneId.replace(/\W/g, '')}`,
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(canaryDir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes the daemon's certificate in `dataDir` before it starts, with the built certificate
 * module (as the tests' `makeCertificate` does): from source, a daemon in this process would
 * start its certificate maker as a .ts file, which node without a TypeScript loader cannot run.
 */
export async function prepareCertificate(dataDir: string): Promise<void> {
  const built = (await import(pathToFileURL(join(ROOT, 'dist/auth/certificate.js')).href)) as {
    ensureCertificate: typeof ensureCertificate;
  };
  await built.ensureCertificate(join(dataDir, 'tls'), ['127.0.0.1']);
}

export interface FuzzTargetParts {
  /** The daemon's base URL (`https://127.0.0.1:<port>`) and token. */
  readonly base: string;
  readonly token: string;
  readonly routes: readonly FuzzRoute[];
  readonly dataDir: string;
  /** The daemon's log so far: its error lines count as failures. */
  readonly log: () => string;
}

/**
 * The target for a daemon running in this process. Uncaught errors and the daemon's error log
 * lines are collected as it runs; `detach` takes the listeners off.
 */
export async function fuzzTarget(world: FuzzWorld, parts: FuzzTargetParts): Promise<{ target: FuzzTarget; detach: () => void }> {
  const url = new URL(parts.base);
  const authDir = join(parts.dataDir, 'auth');
  const store = await TokenStore.open(authDir);
  const revoked = store.create('fuzz-revoked').token;
  store.revoke('fuzz-revoked');
  store.close();
  const pairings = new PairingStore(authDir);
  const raised: string[] = [];
  const onError = (err: unknown) => raised.push(`uncaught: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  let logSeen = parts.log().length;
  const target: FuzzTarget = {
    peer: { host: url.hostname, port: Number(url.port), tls: url.protocol === 'https:' },
    host: url.host,
    token: parts.token,
    badTokens: ['fz-wrong-token-0000000000000000000000000000', revoked, pairings.create().token],
    routes: parts.routes,
    live: [FUZZ_SESSION],
    canaryDir: world.canaryDir,
    uploadsRoot: parts.dataDir,
    newPairingToken: () => pairings.create().token,
    crashes: () => raised.splice(0),
    errorLog: () => {
      const log = parts.log();
      const lines = log
        .slice(logSeen)
        .split('\n')
        .filter((l) => /"level":(50|60)/.test(l));
      logSeen = log.length;
      return lines;
    },
  };
  return {
    target,
    detach: () => {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}

/** The probes of tmux and the live pane (`tmux` runs a tmux command on the daemon's server). */
export function fuzzProbes(
  world: FuzzWorld,
  tmux: (...args: string[]) => Promise<string>,
  eventually: FuzzProbes['eventually'],
): FuzzProbes {
  let file: string | null = null;
  return {
    sessions: async () => (await tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').filter(Boolean),
    paneInput: () => (file !== null && existsSync(file) ? readFileSync(file) : Buffer.alloc(0)),
    description: async (id) => (await tmux('show-options', '-v', '-q', '-t', `=${id}:`, '@description')).replace(/\n$/, ''),
    eventually: async (fn, what) => {
      file ??= world.sinkFile((await tmux('display-message', '-p', '-t', `=${FUZZ_SESSION}:`, '#{pane_id}')).trim());
      await eventually(fn, what);
    },
  };
}

/** Waits until the live pane's program is reading (its first line on the screen). */
export async function sinkReady(tmux: (...args: string[]) => Promise<string>, eventually: FuzzProbes['eventually']): Promise<void> {
  await eventually(
    async () => (await tmux('capture-pane', '-p', '-t', `=${FUZZ_SESSION}:`)).includes('sink-ready'),
    'the pane program (sink-ready)',
  );
}
