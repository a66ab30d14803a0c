/**
 * `tether service install | uninstall | status` on Linux, with real files and the real daemon:
 * the unit systemd would load (checked by `systemd-analyze verify` where it exists), its command
 * run as systemd would run it (the daemon answers), idempotent installs, an uninstall that leaves
 * nothing behind, and files tether did not write left alone. The unit and the plist as text:
 * every value escaped for its format.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchdPlist, missingProtection, systemdUnit, systemdWord, type DaemonLaunch } from '../../src/cli/login-service.js';
import { DAEMON_ENV } from '../../src/config/daemon-process.js';
import { readRunFile } from '../../src/runtime/run-file.js';
import { daemonHome, runCli, type DaemonHome } from '../helpers/daemon.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** Splits a systemd command line or value the way systemd does for the quoting this unit uses. */
function systemdWords(line: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    words.push(m[1]!.replace(/\\(.)/g, '$1').replaceAll('%%', '%').replaceAll('$$', '$'));
  }
  return words;
}

const HOSTILE = '/opt/a dir/with "quotes" %n $HOME \\back #hash';

describe('the unit and the plist as text', () => {
  const launch: DaemonLaunch = {
    node: `${HOSTILE}/node`,
    nodeArgs: ['--max-semi-space-size=2'],
    cli: `${HOSTILE}/main.js`,
    env: { PATH: `${HOSTILE}:/usr/bin`, TETHER_DATA_DIR: `${HOSTILE}/data` },
  };

  it('systemd: every word comes back as it was, and a line break is refused', () => {
    const unit = systemdUnit(launch, '/var/log/x');
    const exec = unit.split('\n').find((l) => l.startsWith('ExecStart='))!;
    expect(systemdWords(exec)).toEqual([launch.node, '--max-semi-space-size=2', launch.cli, 'serve']);
    const env = unit
      .split('\n')
      .filter((l) => l.startsWith('Environment='))
      .flatMap((l) => systemdWords(l));
    expect(env).toEqual([`PATH=${HOSTILE}:/usr/bin`, `TETHER_DATA_DIR=${HOSTILE}/data`]);
    expect(() => systemdWord('a\nExecStartPre=/bin/rm -rf /')).toThrow();
    // A stop, restart or crash ends the daemon only, never the tmux server in its group.
    expect(unit).toMatch(/^\[Service\][^[]*^KillMode=process$/m);
    expect(missingProtection('systemd', unit)).toBeNull();
    expect(missingProtection('systemd', unit.replace(/^KillMode=process\n/m, ''))).toBe('KillMode=process');
  });

  it('launchd: a property list whose strings decode to the values given', () => {
    const plist = launchdPlist({ ...launch, node: '/usr/bin/node <&> "x"' }, '/tmp/l & <log>');
    const strings = [...plist.matchAll(/<string>([^<]*)<\/string>/g)].map((m) =>
      m[1]!.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&'),
    );
    expect(strings).toContain('/usr/bin/node <&> "x"');
    expect(strings).toContain(launch.cli);
    // Its output file is never rotated: log lines stay in the log file only.
    expect(strings.slice(strings.indexOf('serve'), strings.indexOf('serve') + 2)).toEqual(['serve', '--no-log-stderr']);
    expect(strings).toContain('/tmp/l & <log>');
    expect(plist).toMatch(/<key>Label<\/key>\s*<string>dev\.tether\.daemon<\/string>/);
    expect(plist).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    // launchd leaves what remains of the job's process group alone when the daemon exits.
    expect(plist).toMatch(/<key>AbandonProcessGroup<\/key>\s*<true\/>/);
    expect(missingProtection('launchd', plist)).toBeNull();
    expect(missingProtection('launchd', plist.replace(/<key>AbandonProcessGroup<\/key>\s*<true\/>/, ''))).toBe('AbandonProcessGroup');
    // Every element that opens closes: no raw '<' or '&' leaked into the text.
    expect(plist.replace(/<[^>]+>/g, '')).not.toMatch(/[<>]|&(?!amp;|lt;|gt;|quot;)/);
  });
});

describe('tether service on Linux', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let xdg: string;
  let env: NodeJS.ProcessEnv;
  let unitFile: string;

  beforeAll(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, `[agent]\ncommand = "/bin/sh"\ndefault_session = "svc-main"\n`);
    xdg = mkdtempSync(join(tmpdir(), 'tether-xdg-'));
    env = { ...home.env, XDG_CONFIG_HOME: xdg, HOME: home.dir };
    unitFile = join(xdg, 'systemd', 'user', 'tether.service');
  }, 30_000);
  afterAll(async () => {
    await tmux.cleanup();
    home.cleanup();
    rmSync(xdg, { recursive: true, force: true });
  });

  it('install writes a unit systemd accepts, says how to enable it, and is idempotent', async () => {
    const first = await runCli(['service', 'install'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${unitFile}`);
    expect(first.stdout).toContain('systemctl --user daemon-reload && systemctl --user enable --now tether.service');
    expect(first.stdout).toContain('loginctl enable-linger');
    const text = readFileSync(unitFile, 'utf8');
    expect(text).toMatch(/^Restart=on-failure$/m);
    expect(text).toMatch(/^KillMode=process$/m);

    const verify = spawnSync('systemd-analyze', ['verify', '--user', unitFile], {
      encoding: 'utf8',
      env: { ...process.env, XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'tether-run-')) },
    });
    if (verify.error) console.log(`systemd-analyze is not here (${verify.error.message}): the unit is not verified by systemd`);
    else expect(verify.status, verify.stderr).toBe(0);

    const again = await runCli(['service', 'install'], env);
    expect(again.stdout).toContain('is already up to date');
    expect(readFileSync(unitFile, 'utf8')).toBe(text);
    const changed = await runCli(['service', 'install'], { ...env, TETHER_LOG_LEVEL: 'warn' });
    expect(changed.stdout).toContain(`updated ${unitFile}`);
    expect(readFileSync(unitFile, 'utf8')).toContain('TETHER_LOG_LEVEL=warn');
    await runCli(['service', 'install'], env);
  });

  it("the unit's command, run as systemd runs it, starts the daemon", async () => {
    const text = readFileSync(unitFile, 'utf8');
    const [cmd, ...args] = systemdWords(text.split('\n').find((l) => l.startsWith('ExecStart='))!);
    const unitEnv = Object.fromEntries(
      text
        .split('\n')
        .filter((l) => l.startsWith('Environment='))
        .map((l) => systemdWords(l)[0]!)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    expect(unitEnv.TETHER_DATA_DIR).toBe(home.dataDir);
    expect(unitEnv.TETHER_CONFIG).toBe(home.configFile);
    // The daemon's allocator setting goes with it (a variable the user set would win).
    expect(unitEnv.MALLOC_MMAP_THRESHOLD_).toBe(DAEMON_ENV.MALLOC_MMAP_THRESHOLD_);
    // systemd gives a unit only the variables it names (and a few of its own).
    const daemon = spawn(cmd!, args, { env: { ...unitEnv, HOME: home.dir }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await eventually(
        () => readRunFile(join(home.dataDir, 'run'))?.pid === daemon.pid,
        20_000,
        100,
        'the run file of the daemon the unit started',
      );
      // It is the daemon, answering as one: `tether status` reaches it with the local token.
      const status = await runCli(['status'], home.env);
      expect(status.code, stderr).toBe(0);
      expect(status.stdout).toContain('svc-main');
      expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim()).toBe('svc-main');
    } finally {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
    }
  }, 40_000);

  it('status tells what is installed; uninstall refuses while enabled, then leaves nothing behind', { timeout: 120_000 }, async () => {
    const status = await runCli(['service', 'status'], env);
    expect(status.stdout).toContain(`installed: ${unitFile}`);
    expect(status.stdout).toMatch(/enabled: no/);
    expect(status.stdout).not.toContain('lacks');
    // A unit written before tether set KillMode: status says what that risks, install updates it.
    const current = readFileSync(unitFile, 'utf8');
    writeFileSync(unitFile, current.replace(/^KillMode=process\n/m, ''));
    expect((await runCli(['service', 'status'], env)).stdout).toContain('it lacks KillMode=process: stopping or restarting the service');
    const updated = await runCli(['service', 'install'], env);
    expect(updated.stdout).toContain('the old file lacked KillMode=process');
    expect(readFileSync(unitFile, 'utf8')).toBe(current);
    // systemctl enable makes this link; the unit is systemd's to disable first.
    const wants = join(xdg, 'systemd', 'user', 'default.target.wants');
    mkdirSync(wants);
    symlinkSync(unitFile, join(wants, 'tether.service'));
    const refused = await runCli(['service', 'uninstall'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('systemctl --user disable --now tether.service');
    expect(existsSync(unitFile)).toBe(true);
    rmSync(wants, { recursive: true });

    const removed = await runCli(['service', 'uninstall'], env);
    expect(removed.code).toBe(0);
    expect(readdirSync(xdg)).toEqual([]);
    expect((await runCli(['service', 'uninstall'], env)).stdout).toContain('nothing to remove');
    expect((await runCli(['service', 'status'], env)).stdout).toContain('not installed');
  });

  it('a unit file tether did not write is left alone by install and uninstall', async () => {
    mkdirSync(join(xdg, 'systemd', 'user'), { recursive: true });
    writeFileSync(unitFile, '[Service]\nExecStart=/usr/bin/something-else\n');
    for (const verb of ['install', 'uninstall']) {
      const r = await runCli(['service', verb], env);
      expect(r.code, verb).not.toBe(0);
      expect(r.stderr).toContain('not written by tether');
      expect(readFileSync(unitFile, 'utf8')).toBe('[Service]\nExecStart=/usr/bin/something-else\n');
    }
    rmSync(join(xdg, 'systemd'), { recursive: true });
  });
});
