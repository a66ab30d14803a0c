/**
 * Which service manager runs a daemon, and the argv `tether stop` / `tether restart` hand it
 * (src/cli/service-control.ts). Pure: the manager's answers are given as text; the real systemd
 * path runs in test/e2e/service-survival.test.ts, launchd cannot run here.
 */
import { describe, expect, it } from 'vitest';
import {
  inUserUnit,
  launchdPid,
  restartArgv,
  serviceManagerOf,
  stopArgv,
  type Runner,
  type ServiceManager,
} from '../../src/cli/service-control.js';

const USER_UNIT = '0::/user.slice/user-1000.slice/user@1000.service/app.slice/tether.service\n';
const systemd: ServiceManager = { kind: 'systemd', unit: 'tether.service' };
const launchd: ServiceManager = { kind: 'launchd', target: 'gui/501/dev.tether.daemon' };

/** A runner that answers each argv from a table and records what it was asked. */
function runner(answers: Record<string, { ok: boolean; stdout?: string; stderr?: string }>): Runner & { asked: string[][] } {
  const asked: string[][] = [];
  const run = ((argv: readonly string[]) => {
    asked.push([...argv]);
    const a = answers[argv.join(' ')] ?? { ok: false, stderr: 'not expected' };
    return Promise.resolve({ ok: a.ok, stdout: a.stdout ?? '', stderr: a.stderr ?? '' });
  }) as Runner & { asked: string[][] };
  run.asked = asked;
  return run;
}

describe('the argv given to the service manager', () => {
  it('systemd: systemctl --user stop / restart of the unit', () => {
    expect(stopArgv(systemd)).toEqual(['systemctl', '--user', 'stop', 'tether.service']);
    expect(restartArgv(systemd)).toEqual(['systemctl', '--user', 'restart', 'tether.service']);
  });
  it('launchd: a SIGTERM to the job, and kickstart -k of the gui/<uid>/<label> target', () => {
    expect(stopArgv(launchd)).toEqual(['launchctl', 'kill', 'SIGTERM', 'gui/501/dev.tether.daemon']);
    expect(restartArgv(launchd)).toEqual(['launchctl', 'kickstart', '-k', 'gui/501/dev.tether.daemon']);
  });
});

describe('whether a daemon is the login service', () => {
  it("reads tether's unit in a user manager's tree, on cgroup v2 and v1", () => {
    expect(inUserUnit(USER_UNIT)).toBe(true);
    expect(inUserUnit('12:pids:/x\n1:name=systemd:/user.slice/user-1000.slice/user@1000.service/tether.service\n')).toBe(true);
    expect(inUserUnit('0::/system.slice/tether.service\n')).toBe(false);
    expect(inUserUnit('0::/user.slice/user-1000.slice/user@1000.service/app.slice/other.service\n')).toBe(false);
    expect(inUserUnit('0::/user.slice/user-1000.slice/session-3.scope\n')).toBe(false);
    expect(inUserUnit('')).toBe(false);
  });

  it('systemd: only when systemctl --user names the same pid as the main pid', async () => {
    const show = 'systemctl --user show --property=MainPID --value tether.service';
    const base = { platform: 'linux' as const, readCgroup: () => Promise.resolve(USER_UNIT) };
    expect(await serviceManagerOf(42, { ...base, run: runner({ [show]: { ok: true, stdout: '42\n' } }) })).toEqual(systemd);
    expect(await serviceManagerOf(42, { ...base, run: runner({ [show]: { ok: true, stdout: '77\n' } }) })).toEqual({
      kind: 'unconfirmed',
      why: "systemctl --user names pid 77 as tether.service's main process, not 42",
    });
    const down = await serviceManagerOf(42, { ...base, run: runner({ [show]: { ok: false, stderr: 'Failed to connect to bus' } }) });
    expect(down).toEqual({ kind: 'unconfirmed', why: 'systemctl --user cannot be asked about tether.service: Failed to connect to bus' });
  });

  it("systemd: a daemon outside the unit is nobody's, and systemctl is not asked", async () => {
    const run = runner({});
    expect(
      await serviceManagerOf(42, { platform: 'linux', readCgroup: () => Promise.resolve('0::/user.slice/session-3.scope\n'), run }),
    ).toBeNull();
    expect(await serviceManagerOf(42, { platform: 'linux', readCgroup: () => Promise.reject(new Error('gone')), run })).toBeNull();
    expect(run.asked).toEqual([]);
  });

  it("launchd: when launchctl print names the daemon's pid", async () => {
    const printed =
      'gui/501/dev.tether.daemon = {\n\tactive count = 1\n\tstate = running\n\tpid = 42\n\tprogram = /usr/local/bin/node\n}\n';
    expect(launchdPid(printed)).toBe(42);
    expect(launchdPid('gui/501/dev.tether.daemon = {\n\tstate = not running\n}\n')).toBeNull();
    const run = runner({ 'launchctl print gui/501/dev.tether.daemon': { ok: true, stdout: printed } });
    expect(await serviceManagerOf(42, { platform: 'darwin', uid: 501, run })).toEqual(launchd);
    expect(await serviceManagerOf(43, { platform: 'darwin', uid: 501, run })).toBeNull();
    expect(await serviceManagerOf(42, { platform: 'darwin', uid: 501, run: runner({}) })).toBeNull();
  });

  it('elsewhere: nobody', async () => {
    expect(await serviceManagerOf(42, { platform: 'win32', run: runner({}) })).toBeNull();
  });
});
