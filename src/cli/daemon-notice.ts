/**
 * The notice a token command gives the running daemon after it changed the token store: one
 * authenticated request over loopback (the daemon found by its run file, its certificate
 * pinned when it serves https). Every authentication in the daemon looks at the store first
 * (src/auth/token-store.ts `verify`), and a token found gone has its connections closed then
 * and there, so the daemon's answer, whatever its status, means it holds the new set: its
 * refusals and the 4401 closes happened before `tether auth revoke` returns.
 *
 * Invariant: never fails the command. A daemon that does not run needs no notice; one that
 * does not answer is reported, and still refuses the token at its next request.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { CERT_FILE } from '../auth/certificate.js';
import type { TetherPaths } from '../config/paths.js';
import { pinnedOptions } from '../reference-client/pinning.js';
import { readRunFile } from '../runtime/run-file.js';
import { AUTH_DIR_NAMES } from '../config/data-layout.js';

/** How long the daemon has to answer the notice. */
export const NOTICE_TIMEOUT_MS = 5000;
/** The request the notice is: cheap, and authenticated like every other. */
const NOTICE_PATH = '/health';

export type NoticeResult =
  | { readonly kind: 'not-running' }
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'failed'; readonly why: string };

/** The local token, read before a revocation can remove its file; null when there is none. */
export function readLocalToken(paths: TetherPaths): string | null {
  try {
    return readFileSync(join(paths.authDir, AUTH_DIR_NAMES.localToken), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Asks the running daemon once, with `token`, and waits for its answer. */
export function noticeDaemon(paths: TetherPaths, token: string): Promise<NoticeResult> {
  const run = readRunFile(paths.runDir);
  if (!run) return Promise.resolve({ kind: 'not-running' });
  // A daemon bound to every address is asked over loopback.
  const host = run.host === '0.0.0.0' ? '127.0.0.1' : run.host === '::' ? '::1' : run.host;
  let tls: ReturnType<typeof pinnedOptions> | null = null;
  try {
    if (run.scheme === 'https') {
      if (!run.fingerprint) return Promise.resolve({ kind: 'failed', why: 'its run file has no certificate fingerprint' });
      tls = pinnedOptions(readFileSync(join(paths.tlsDir, CERT_FILE), 'utf8'), run.fingerprint);
    }
  } catch (err) {
    return Promise.resolve({ kind: 'failed', why: (err as Error).message });
  }
  return new Promise((resolve) => {
    const options = {
      host,
      port: run.port,
      path: NOTICE_PATH,
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
      timeout: NOTICE_TIMEOUT_MS,
    };
    const req = tls ? httpsRequest({ ...options, ...tls }) : httpRequest(options);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${NOTICE_TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve({ kind: 'failed', why: err.message }));
    req.on('response', (res) => {
      res.resume();
      resolve({ kind: 'answered', status: res.statusCode ?? 0 });
    });
    req.end();
  });
}
