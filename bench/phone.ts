/**
 * The phone's side of the push benchmarks: the HTTP/2 TLS stand-ins for APNs, and a phone paired
 * with a benchmark's daemon the way the app pairs one (`tether pair --json` run against the
 * daemon's config and data dir, then `POST /pair` with the pairing token). Its device token is
 * for the sandbox stand-in; the phone never opens a stream, so it is in the background.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startApnsStandIns, type ApnsStandIns } from '../testkit/apns-server.js';
import { benchCli, type BenchDaemon } from './harness.js';

const run = promisify(execFile);

/** Pairs a phone named `name` whose APNs device token is `deviceToken`; resolves to the bearer token the daemon gave it. */
export async function pairPhone(bd: BenchDaemon, deviceToken: string, name = 'phone'): Promise<string> {
  const env = { ...process.env, TETHER_CONFIG: join(bd.tmux.dir, 'config.toml'), TETHER_DATA_DIR: bd.dataDir };
  const { stdout } = await run(process.execPath, [benchCli(), 'pair', '--json'], { env });
  const { pairingToken } = JSON.parse(stdout) as { pairingToken: string };
  const paired = await bd.request('POST', '/pair', { pairingToken, deviceName: name, deviceToken, environment: 'sandbox' });
  if (paired.status !== 201) throw new Error(`pairing ${name}: HTTP ${paired.status} ${paired.text}`);
  return (JSON.parse(paired.text) as { token: string }).token;
}

/** Runs `fn` with the APNs stand-ins in a temp dir named after `bench`, closing and removing them whatever happens. */
export async function withApnsStandIns<T>(bench: string, fn: (apns: ApnsStandIns) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `tether-bench-${bench}-`));
  const apns = await startApnsStandIns(dir);
  try {
    return await fn(apns);
  } finally {
    await apns.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
