/**
 * The daemon's logs stay bounded and single: a daemon started detached, as the pi extension and
 * `tether restart` start it, with a small log cap, through a storm of refused requests (each an
 * `info` line) at debug level. The log files stay under their cap, rotated into at most three
 * older files; every line exists once; `run/serve.out` holds the URL line, not a copy of the log.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/runtime/run-file.js';
import { DAEMON_OUT_FILE, spawnDetachedDaemon } from '../../src/config/daemon-process.js';
import { resolvePaths } from '../../src/config/paths.js';
import { processExists } from '../../src/process.js';
import { CLI, daemonHome, runCli, type DaemonHome } from '../helpers/daemon.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** 64 KiB: small enough for a storm to rotate it several times. */
const CAP_MB = 0.0625;
const CAP_BYTES = 65_536;
const STORM = 1500;

describe('log files through a request storm', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let pid = 0;

  beforeAll(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, '[agent]\ncommand = "/bin/cat"\n', { TETHER_LOG_MAX_MB: String(CAP_MB), TETHER_LOG_LEVEL: 'debug' });
  });

  afterAll(async () => {
    if (pid > 0 && processExists(pid)) process.kill(pid, 'SIGTERM');
    await eventually(() => pid === 0 || !processExists(pid), 20_000, 100, 'the daemon to exit');
    await tmux.cleanup();
    home.cleanup();
  });

  it('stay under their cap, one copy of each line, nothing in serve.out but the URL line', { timeout: 180_000 }, async () => {
    const runDir = resolvePaths(home.env).runDir;
    const { child } = spawnDetachedDaemon({ node: process.execPath, cli: CLI, runDir, cwd: home.dir, env: home.env });
    const run = await eventually(() => (readRunFile(runDir)?.pid === child.pid ? readRunFile(runDir) : null), 30_000, 100, 'the daemon');
    if (!run) throw new Error('no run file');
    pid = run.pid;

    // Refused requests (a wrong token): each is an info line, with its own path to find it by.
    for (let i = 0; i < STORM; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          fetch(`http://127.0.0.1:${run.port}/sessions?storm=${i + k}`, { headers: { authorization: 'Bearer wrong' } }).then((r) => {
            expect(r.status).toBe(401);
            return r.arrayBuffer();
          }),
        ),
      );
    }
    const logFile = join(home.dataDir, 'tether.log');
    const parts = [logFile, `${logFile}.1`, `${logFile}.2`, `${logFile}.3`];
    /** The storm's ids in the refusal lines kept, across all the files. */
    const stormIds = (): string[] =>
      parts
        .filter((p) => existsSync(p))
        .flatMap((p) =>
          readFileSync(p, 'utf8')
            .split('\n')
            .filter((l) => l !== ''),
        )
        .filter((l) => /storm=\d+/.test(l) && (JSON.parse(l) as { msg?: string }).msg === 'request')
        .map((l) => /storm=(\d+)/.exec(l)![1]!);
    // The last refusal's line is written once its answer went out (an earlier debug line names the
    // same URL as the request comes in): wait for the refusal line itself, not for a time.
    await eventually(() => stormIds().includes(String(STORM - 1)), 15_000, 100, 'the refusal line of the last storm request');
    for (const p of parts) expect(statSync(p).size, p).toBeLessThanOrEqual(CAP_BYTES);
    expect(existsSync(`${logFile}.4`)).toBe(false);

    // Every storm line kept is there once, across all the files.
    const ids = stormIds();
    expect(ids.length).toBeGreaterThan(100);
    expect(new Set(ids).size).toBe(ids.length);
    // The newest are kept, the oldest rotated away: the log is bounded, not frozen.
    expect(ids).toContain(String(STORM - 1));
    expect(ids).not.toContain('0');

    // The detached daemon's own output: the URL line, no log line.
    const out = readFileSync(join(runDir, DAEMON_OUT_FILE), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);

    expect((await runCli(['stop'], home.env, 45_000)).code).toBe(0);
  });
});
