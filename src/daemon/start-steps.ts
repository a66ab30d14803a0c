/**
 * The steps of `tether serve`'s start that stand alone: the tmux it may use (its version checked,
 * its commands run in a scope that outlives a service's daemon), the certificate (made on first start,
 * kept once the port is held), the local token, the disk buffers as configured,
 * the control clients a dead predecessor left attached, the disk buffers' set-up with the
 * start-up cleanup of what was idle too long, and the URL line it prints.
 */
import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type pino from 'pino';
import { isDomainError } from '../errors.js';
import { DiskBuffers, GIB, MIB, type SessionActivity } from '../actors/disk-buffer.actor.js';
import { isLoopback, type TetherConfig } from '../config/schema.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import type { OpsInspector } from '../ops/inspector.js';
import { findOrMakeCertificate, type FoundCertificate } from '../auth/certificate.js';
import type { TokenStore } from '../auth/token-store.js';
import { ControlLedger, keepControlLedger, retireStaleControlClients } from '../tmux/control-ledger.js';
import { TmuxCli } from '../tmux/exec.js';
import { chooseServerScope } from '../tmux/server-scope.js';
import { tmuxTarget, type TmuxTarget } from '../tmux/target.js';
import { checkTmuxVersion, readTmuxVersion } from '../tmux/version.js';
import { killSession } from '../tmux/sessions.js';
import { listSessions, sessionActivity } from '../tmux/session-list.js';
import { CliError } from './fail.js';
import { preparePush } from '../push/settings.js';
import { RUN_DIR_NAMES } from '../config/data-layout.js';

/** The tmux that `[tmux] socket` names, refused (one line) when it cannot be run or is too old. */
export async function usableTmux(socket: string): Promise<TmuxTarget> {
  const target = tmuxTarget(socket);
  const version = await readTmuxVersion(target).catch((err: Error) => {
    throw new CliError(`tmux could not be run: ${err.message}`);
  });
  try {
    checkTmuxVersion(version);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  return target;
}

/** The daemon's tmux commands: a tmux server it starts must outlive it, under a service too (docs/service.md). */
export async function daemonTmuxCli(target: TmuxTarget, log: pino.Logger): Promise<TmuxCli> {
  const scope = await chooseServerScope({ tmuxBin: target.bin });
  if (scope.service !== null)
    log[scope.launcher ? 'info' : 'warn']({ service: scope.service }, `running as a systemd service: ${scope.why}`);
  return new TmuxCli(target, {
    ...(scope.launcher ? { serverLauncher: scope.launcher } : {}),
    onLauncherFailed: (why) => log.warn({ why }, "systemd-run failed: this tmux command ran in the daemon's own control group"),
  });
}

/** Free bytes on the file system of `dir`, for the watchdog. */
export async function statfsFree(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/**
 * The disk buffers as `[buffer]` configures them, watched by `/ops`; `parts` are what a test
 * injects (a free-space source, a clock days ahead). Making them touches no file.
 */
export function makeDiskBuffers(
  config: TetherConfig,
  dir: string,
  ops: OpsInspector,
  parts: { readonly freeBytes?: ((dir: string) => Promise<number>) | undefined; readonly now?: (() => number) | undefined },
  log: pino.Logger,
): DiskBuffers {
  const minFreeBytes = Math.round(config.buffer.min_free_gb * GIB);
  return new DiskBuffers({
    inspect: (id) =>
      ops.observer(id === null ? { label: 'diskBuffer', parent: 'sidecar' } : { label: 'buffer', parent: sessionActorId(id) }),
    dir,
    limits: {
      sessionCapBytes: config.buffer.session_cap_mb * MIB,
      globalCapBytes: config.buffer.global_cap_mb * MIB,
      minFreeBytes,
      // Hysteresis: writing resumes only a tenth above the minimum (at least 1 MB), so it does not flap.
      resumeMarginBytes: Math.max(MIB, Math.round(minFreeBytes / 10)),
      idleMs: config.buffer.idle_days * 86_400_000,
    },
    freeBytes: () => (parts.freeBytes ?? statfsFree)(dir),
    watchdogIntervalMs: config.buffer.watchdog_interval_s * 1000,
    now: parts.now ?? Date.now,
    log,
  });
}

/** What the start-up cleanup needs to know of each tmux session. */
async function activityOf(cli: TmuxCli): Promise<Map<string, SessionActivity>> {
  const [activity, sessions] = await Promise.all([sessionActivity(cli), listSessions(cli)]);
  const out = new Map<string, SessionActivity>();
  for (const s of sessions) {
    const a = activity.get(s.name);
    // Only tether's own sessions are ever removed; a user's session is never touched.
    out.set(s.name, {
      lastActivityMs: a?.lastActivityMs ?? 0,
      attached: (a?.attachedClients ?? s.attachedClients) > 0,
      ended: s.isTether && s.paneDead,
    });
  }
  return out;
}

/**
 * Measures the disk buffers and removes what the idle cleanup finds: buffers idle longer than
 * `idle_days`, and tether sessions that ended that long ago. A data dir that cannot hold buffers
 * must not keep the sessions from being served: that is logged, and the start goes on.
 */
export async function setUpBuffers(buffers: DiskBuffers, cli: TmuxCli, log: pino.Logger): Promise<void> {
  try {
    await buffers.start();
    const { endedSessions } = await buffers.cleanupIdle(await activityOf(cli).catch(() => new Map<string, SessionActivity>()));
    for (const id of endedSessions) {
      await killSession(cli, id).catch(() => undefined);
      log.info({ session: id }, 'removed a session that had ended and was idle longer than idle_days');
    }
  } catch (err) {
    log.error({ err: (err as Error).message }, 'the disk buffers could not be set up');
  }
}

/** The ledger of this data dir's control clients, in the run dir. */
export const CONTROL_LEDGER_FILE = RUN_DIR_NAMES.controlLedger;

/**
 * Ends the control clients a daemon that died (SIGKILL, a crash) left attached, before this
 * one attaches anything, and keeps this daemon's own in the ledger from now on
 * (src/tmux/control-ledger.ts says why tmux needs it). The result stops the keeping, at the stop.
 */
export async function retireStaleLinks(cli: TmuxCli, target: TmuxTarget, runDir: string, log: pino.Logger): Promise<() => void> {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const ledger = new ControlLedger(join(runDir, CONTROL_LEDGER_FILE));
  const { ended, lingering } = await retireStaleControlClients(cli, target, ledger);
  if (ended > 0) log.info({ ended }, 'ended the tmux control clients a previous daemon left attached');
  if (lingering > 0) log.warn({ lingering }, 'tmux still holds control clients a previous daemon left attached');
  return keepControlLedger(target, ledger);
}

/** The local token, made on a first start; one whose plaintext is lost is the refusal that says what to do. */
export async function localToken(tokens: TokenStore, authDir: string): Promise<string> {
  const local = await tokens.ensureLocalToken();
  if (local.token) return local.token;
  throw new CliError(
    `the local token's plaintext is missing from ${authDir}: run "tether auth revoke local" and start again for a new one`,
  );
}

/**
 * The certificate: read, or on first start made in memory (written by `keepCertificate` once the
 * port is held); problems become the one-line refusal.
 */
export async function loadCertificate(tlsDir: string, host: string, publicBaseUrl: string, log: pino.Logger): Promise<FoundCertificate> {
  const hosts = [host, ...(publicBaseUrl !== '' ? [new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '')] : [])];
  try {
    const cert = await findOrMakeCertificate(tlsDir, hosts);
    if (cert.missing.length > 0)
      log.warn({ missing: cert.missing }, 'the TLS certificate does not name every host; paired phones pin its fingerprint, so it is kept');
    return cert;
  } catch (err) {
    throw isDomainError(err, 'certificate-unusable') ? new CliError(err.message) : err;
  }
}

/** Writes the certificate this start made (nothing for one it read); problems become the one-line refusal. */
export function keepCertificate(cert: FoundCertificate | null, log: pino.Logger): void {
  if (!cert?.save) return;
  try {
    cert.save();
  } catch (err) {
    throw isDomainError(err, 'certificate-unusable') ? new CliError(err.message) : err;
  }
  log.info({ fingerprint: cert.fingerprint, names: cert.names }, 'made a new TLS certificate: phones pin its fingerprint');
}

/** The URL line: the daemon's address (`daemonUrl`) with the token. */
export function startupUrl(config: TetherConfig, scheme: 'http' | 'https', host: string, port: number, token: string): string {
  return `${daemonUrl(config, scheme, host, port)}?token=${encodeURIComponent(token)}`;
}

/** `https` with a certificate, else `http`. */
export function schemeOf(cert: FoundCertificate | null): 'http' | 'https' {
  return cert ? 'https' : 'http';
}

/** A gate the server's requests wait behind until the sessions are adopted (`open`). */
export function openingGate(): { readonly opened: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** The daemon's own address (the run file's): publicBaseUrl when set, else the bound address. */
export function daemonUrl(config: TetherConfig, scheme: 'http' | 'https', host: string, port: number): string {
  if (config.publicBaseUrl !== '') return `${config.publicBaseUrl.replace(/\/+$/, '')}/`;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}/`;
}

/** The certificate when `tls` is on (made in memory on a first start: `keepCertificate` writes it once the port is held), else null. */
export async function certificateIfOn(
  config: TetherConfig,
  tlsDir: string,
  host: string,
  log: pino.Logger,
): Promise<FoundCertificate | null> {
  return config.tls ? await loadCertificate(tlsDir, host, config.publicBaseUrl, log) : null;
}

/** `[push]` as configured, a bad one refused at start with its one line. */
export async function pushSettingsOrRefusal(push: TetherConfig['push'], configFile: string): ReturnType<typeof preparePush> {
  return preparePush(push, configFile).catch((err: Error) => {
    throw isDomainError(err, 'push-config-invalid') ? new CliError(err.message) : err;
  });
}

/**
 * The start's warnings for `/health` and the log: the config's own, and plain HTTP on an address
 * other machines reach.
 */
export function startWarnings(
  configWarnings: readonly string[],
  tls: boolean,
  host: string,
  configFile: string,
  log: pino.Logger,
): string[] {
  const plainHttp = plainHttpWarning(tls, host, configFile);
  const warnings = plainHttp === null ? [...configWarnings] : [...configWarnings, plainHttp];
  for (const w of warnings) log.warn(w);
  return warnings;
}

/** The warning for plain HTTP on an address other machines reach, or null when there is none to give. */
export function plainHttpWarning(tls: boolean, host: string, configFile: string): string | null {
  if (tls || isLoopback(host)) return null;
  return `tls = false while bound to ${host}: tokens cross the network in the clear unless a TLS reverse proxy is in front (set tls = true in ${configFile})`;
}
