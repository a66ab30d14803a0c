/**
 * A refused `tether serve` changes no file (#32). A daemon runs with TLS, an uploads folder of
 * the user's and uploads in it; then everything a start could touch is put in a state a start
 * would change: uploads older than keep_days in the ledger, Claude's settings file stale, the log
 * file past the cap the second daemon is given (its next line would rotate it). A second daemon
 * on the same data dir is refused, once for the port and once (on another port) for the agent
 * socket: a snapshot of the whole data dir and of the uploads folder (names, modes, sizes, times,
 * content hashes, folders' times) is what it was. A first start refused for a port in use leaves
 * its empty data dir empty: no certificate, no token, no log file.
 */
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/runtime/run-file.js';
import { pinnedTlsOptions, WorkbenchClient } from '../../src/reference-client/index.js';
import { daemonHome, runCli, type DaemonHome } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { fileTree } from '../helpers/file-tree.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const DAY = 86_400_000;
const AGENT = '[agent]\ncommand = "/bin/sh"\ndefault_session = "projects"\n';

describe('a second daemon on the same data dir', () => {
  const uploadsDir = mkdtempSync(join(tmpdir(), 'tether-refused-uploads-'));
  mkdirSync(join(uploadsDir, 'projects'));
  writeFileSync(join(uploadsDir, 'projects', 'plan.md'), 'the user’s plan\n');
  const fx = useDaemon(`tls = true\n${AGENT}[uploads]\ndir = ${JSON.stringify(uploadsDir)}\nkeep_days = 1\n`, { samePort: true });
  afterAll(() => rmSync(uploadsDir, { recursive: true, force: true }));

  /** Both folders as they are now. */
  const snapshot = () => ({ data: fileTree(fx.home.dataDir, { folderTimes: true }), uploads: fileTree(uploadsDir, { folderTimes: true }) });
  /** Waits until the running daemon has stopped changing files (its start's writes are done). */
  const settled = async () => {
    let last = JSON.stringify(snapshot());
    await eventually(
      async () => {
        await new Promise((r) => setTimeout(r, 500));
        const now = JSON.stringify(snapshot());
        const same = now === last;
        last = now;
        return same;
      },
      30_000,
      0,
      'the running daemon to stop changing files',
    );
  };

  beforeAll(async () => {
    const run = readRunFile(join(fx.home.dataDir, 'run'));
    if (!run?.fingerprint) throw new Error('the daemon wrote no run file with a fingerprint');
    const client = new WorkbenchClient({
      baseUrl: fx.d.base,
      token: fx.d.token,
      tls: await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint),
    });
    await client.upload('projects', 'shot.png', Buffer.from('tether’s upload'));
    await client.upload('projects', 'plan.md', Buffer.from('tether’s plan'));
    // Started again, so that nothing of the requests above is pending (a token's last use is
    // written a minute later); no request reaches it from here on.
    expect(await fx.d.stop()).toBe(0);
    await fx.startAgain();
    await settled();

    // What a start would change: old uploads for the clean-up, a stale settings file to write,
    // a log file past the cap to rotate.
    const ledgerFile = join(fx.home.dataDir, 'uploads.json');
    const ledger = JSON.parse(readFileSync(ledgerFile, 'utf8')) as { files: { at: number }[] };
    expect(ledger.files).toHaveLength(2);
    for (const f of ledger.files) f.at = Date.now() - 10 * DAY;
    writeFileSync(ledgerFile, JSON.stringify(ledger));
    writeFileSync(join(fx.home.dataDir, 'agents', 'claude-settings.json'), '{"hooks":{}}\n');
    appendFileSync(join(fx.home.dataDir, 'tether.log'), `${JSON.stringify({ level: 30, msg: 'padding' })}\n`.repeat(400));
    await settled();
  }, 120_000);

  const refusedStart = async (env: NodeJS.ProcessEnv, refusal: RegExp) => {
    const before = snapshot();
    const second = await runCli(['serve'], { ...env, TETHER_LOG_MAX_MB: '0.01' });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(refusal);
    expect(second.stdout).toBe('');
    expect(snapshot()).toEqual(before);
  };

  it('refused for its port: not a file changed, uploads, log, settings and certificate included', { timeout: 60_000 }, async () => {
    await refusedStart(fx.home.env, /bindAddress/);
  });

  it('refused for the agent socket, on a port of its own: not a file changed', { timeout: 60_000 }, async () => {
    const config = join(fx.home.dir, 'other-port.toml');
    copyFileSync(fx.home.configFile, config);
    writeFileSync(config, readFileSync(config, 'utf8').replace(/^bindAddress = .*$/m, 'bindAddress = "127.0.0.1:0"'));
    await refusedStart({ ...fx.home.env, TETHER_CONFIG: config }, /another tether daemon/);
  });
});

describe('a first start refused for a port in use', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let blocker: Server;

  beforeEach(async () => {
    tmux = await privateTmux();
    blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    home = daemonHome(tmux.socket, `bindAddress = "127.0.0.1:${port}"\ntls = true\n${AGENT}`);
  });
  afterEach(async () => {
    blocker.close();
    await tmux.cleanup();
    home.cleanup();
  });

  it('leaves its data dir empty: no certificate, no token, no log file', { timeout: 60_000 }, async () => {
    const r = await runCli(['serve'], home.env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/bindAddress/);
    expect(r.stdout).toBe('');
    expect(fileTree(home.dataDir)).toEqual({});
  });
});
