/**
 * The daemon in the test's own process (`runDaemon`), for the tests that reach past the HTTP
 * surface: the route table, or a part injected through `DaemonIo` (a full disk, a clock days
 * ahead). Everything else runs the built daemon (daemon.ts). Its log lines are kept for
 * `stderr()`, as a child's would be.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PassThrough } from 'node:stream';
import type { ensureCertificate } from '../../src/auth/certificate.js';
import { runDaemon } from '../../src/daemon/root.js';
import type { DaemonIo, RunningDaemon } from '../../src/daemon/daemon-io.js';
import { ROOT } from '../../testkit/built-cli.js';
import type { DaemonHome, TestDaemon } from './daemon.js';

/**
 * Makes the daemon's TLS certificate in `home` before an in-process daemon with `tls = true`
 * starts (as `prepare`): from source, the daemon would start its certificate maker as a .ts
 * file under this process's loader flags, which a test worker does not have; the built module
 * starts the built maker, as a user's daemon does.
 */
export async function makeCertificate(home: DaemonHome): Promise<void> {
  const built = (await import(pathToFileURL(join(ROOT, 'dist/auth/certificate.js')).href)) as {
    ensureCertificate: typeof ensureCertificate;
  };
  await built.ensureCertificate(join(home.dataDir, 'tls'), ['127.0.0.1']);
}

/** What a test may inject into the daemon (env, streams and cwd come from the home). */
export type DaemonParts = Omit<Partial<DaemonIo>, 'env' | 'stdout' | 'stderr' | 'cwd'>;

export interface InProcessTestDaemon extends TestDaemon {
  /** The server's route table. */
  readonly routes: RunningDaemon['routes'];
}

/** Runs the daemon here on `home`, with `parts` injected; resolves once it listens. */
export async function startInProcessDaemon(home: DaemonHome, parts: DaemonParts = {}): Promise<InProcessTestDaemon> {
  let err = '';
  const stderr = new PassThrough();
  stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const daemon = await runDaemon({ env: home.env, stdout: new PassThrough(), stderr, cwd: home.dir, ...parts });
  const url = new URL(daemon.url);
  const token = url.searchParams.get('token') ?? '';
  const base = `${url.protocol}//${url.host}`;
  let stopped: Promise<void> | null = null;
  const stop = () => (stopped ??= daemon.stop());
  return {
    url,
    token,
    base,
    routes: daemon.routes,
    stderr: () => err,
    get: (path, init = {}) => fetch(base + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } }),
    stop,
    kill: stop,
  };
}
