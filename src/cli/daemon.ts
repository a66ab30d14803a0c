/**
 * `tether serve`: wires config, tmux, the actor system and the HTTP server, in the order
 * decisions.md "Start-up" fixes: refuse early with one clear line (bad config, old tmux, port
 * in use); reattach to every tether session; create the default session when there is none;
 * print exactly one line on stdout once listening; shut down cleanly on a signal, leaving tmux
 * sessions running.
 */
import { mkdirSync, rmSync, statfsSync } from 'node:fs';
import { hostname } from 'node:os';
import pino from 'pino';
import { SessionsService } from '../actors/sessions.service.js';
import { SidecarSystem } from '../actors/system.js';
import { CertificateError, ensureCertificate } from '../auth/certificate.js';
import { DeviceRegistry } from '../auth/devices.js';
import { PairingService } from '../auth/pairing.js';
import { PairingStore } from '../auth/pairing-store.js';
import { TokenStore } from '../auth/token-store.js';
import { PushConfigError, PushService, preparePush } from '../push/push.service.js';
import { pairRoutes } from '../transport/pair.routes.js';
import { StreamHub } from '../actors/stream-hub.js';
import { ConnectionRegistry } from '../transport/connections.js';
import { streamRoutes, type StreamHandle } from '../transport/stream.plugin.js';
import { loadConfig, parseBindAddress } from '../config/load.js';
import { resolvePaths, type TetherPaths } from '../config/paths.js';
import type { TetherConfig } from '../config/schema.js';
import { TmuxCli } from '../tmux/exec.js';
import { tmuxTarget } from '../tmux/target.js';
import { checkTmuxVersion, readTmuxVersion } from '../tmux/version.js';
import type { HealthReport } from '../transport/handles.js';
import { buildServer, listen, type ServedRoute } from '../transport/server.js';
import { AgentService } from '../agent/agent-service.js';
import { agentSocketPath } from '../agent/protocol.js';
import { resolveAgent, resolveAgentCommand } from './agent.js';
import { CliError } from './fail.js';
import { writeRunFile } from './run-file.js';
import { packageVersion } from './version.js';

export interface DaemonIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
}

export interface RunningDaemon {
  readonly url: string;
  /** The server's route table (for the security suite: every route must need a token). */
  readonly routes: readonly ServedRoute[];
  stop(): Promise<void>;
}

/** The URL line: publicBaseUrl when set, else the bound address. */
export function startupUrl(config: TetherConfig, scheme: 'http' | 'https', host: string, port: number, token: string): string {
  const q = `?token=${encodeURIComponent(token)}`;
  if (config.publicBaseUrl !== '') return `${config.publicBaseUrl.replace(/\/+$/, '')}/${q}`;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}/${q}`;
}

function makeLogger(paths: TetherPaths, env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): pino.Logger {
  mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
  const level = env.TETHER_LOG_LEVEL ?? 'info';
  const file = pino.destination({ dest: paths.logFile, mkdir: true, sync: false, mode: 0o600 });
  return pino({ level }, pino.multistream([{ stream: stderr, level }, { stream: file, level }]));
}

/** Free disk space of the data dir, in GB, or null where it cannot be read. */
function diskFreeGb(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return Math.round(((s.bavail * s.bsize) / 1e9) * 100) / 100;
  } catch {
    return null;
  }
}

/** Loopback hosts: a phone cannot reach them, and plain http on them stays on the machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The certificate (made on first start); problems become the one-line refusal. */
async function loadCertificate(tlsDir: string, host: string, publicBaseUrl: string, log: pino.Logger) {
  const hosts = [host, ...(publicBaseUrl !== '' ? [new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '')] : [])];
  try {
    const cert = await ensureCertificate(tlsDir, hosts);
    if (cert.created) log.info({ fingerprint: cert.fingerprint, names: cert.names }, 'made a new TLS certificate: phones pin its fingerprint');
    if (cert.missing.length > 0) log.warn({ missing: cert.missing }, 'the TLS certificate does not name every host; paired phones pin its fingerprint, so it is kept');
    return cert;
  } catch (err) {
    throw err instanceof CertificateError ? new CliError(err.message) : err;
  }
}

export async function runDaemon(io: DaemonIo): Promise<RunningDaemon> {
  const paths = resolvePaths(io.env);
  const { config, warnings } = await loadConfig(paths, io.env);
  const target = tmuxTarget(config.tmux.socket);
  const version = await readTmuxVersion(target).catch((err: Error) => {
    throw new CliError(`tmux could not be run: ${err.message}`);
  });
  try {
    checkTmuxVersion(version);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const { host, port } = parseBindAddress(config.bindAddress);
  const agent = resolveAgent(config.agent.command, io.env, { agentSocket: agentSocketPath(paths.dataDir) });

  const log = makeLogger(paths, io.env, io.stderr);
  for (const w of warnings) log.warn(w);
  const tls = config.tls ? await loadCertificate(paths.tlsDir, host, config.publicBaseUrl, log) : null;
  const pushSettings = await preparePush(config.push, paths.configFile).catch((err: Error) => {
    throw err instanceof PushConfigError ? new CliError(err.message) : err;
  });
  const tokens = await TokenStore.open(paths.authDir);
  const local = await tokens.ensureLocalToken();
  if (!local.token) throw new CliError(`the local token's plaintext is missing from ${paths.authDir}: run "tether auth revoke local" and start again for a new one`);

  const startedAt = Date.now();
  const cli = new TmuxCli(target);
  const system = new SidecarSystem({
    cli,
    target,
    ringBytes: config.stream.ring_kb * 1024,
    agent: (id) => agent(id === config.agent.default_session ? io.cwd : (io.env.HOME ?? io.cwd)),
    now: Date.now,
    log,
  });
  const agents = new AgentService({
    cli,
    socketPath: agentSocketPath(paths.dataDir),
    namingCommand: resolveAgentCommand(config.agent.command, io.env).argv,
    namingModel: config.agent.naming_model,
    env: io.env,
    now: Date.now,
    log,
    registered: () => system.requestRescan(),
    described: (id) => system.metaChanged(id),
  });
  /** Each session's last agent state, for push (below). */
  const lastAgentState = new Map<string, string>();
  system.onSessionEnded((id, why) => {
    if (why === 'deleted') agents.hub.forget(id);
    lastAgentState.delete(id);
  });
  system.start();
  await system.booted();
  if (system.sessionIds().length === 0) {
    await system.createSession(config.agent.default_session, 'cli').catch((err: Error) => {
      log.error({ err: err.message }, 'the default session could not be created');
    });
  }

  const scheme = tls ? 'https' : 'http';
  if (!tls && !isLoopback(host)) {
    warnings.push(`tls = false while bound to ${host}: tokens cross the network in the clear unless a TLS reverse proxy is in front (set tls = true in ${paths.configFile})`);
    log.warn(warnings[warnings.length - 1]);
  }
  if (!pushSettings.enabled) log.info(pushSettings.reason);
  const health = (): HealthReport => {
    const status = system.status();
    const warningsNow = [...warnings];
    if (status.tmuxProblem) warningsNow.push(status.tmuxProblem);
    for (const s of status.sessions) if (!s.linked && s.lastError) warningsNow.push(`session ${s.id}: ${s.lastError}`);
    const degraded = false;
    return {
      ok: !degraded,
      status: degraded ? 'degraded' : 'ok',
      version: packageVersion(),
      uptime: Math.round((Date.now() - startedAt) / 1000),
      sessions: status.sessions.length,
      sessionIds: status.sessions.map((s) => s.id),
      clients: hub.count(),
      bufferMb: 0,
      diskFreeGb: diskFreeGb(paths.dataDir) ?? 0,
      watchdog: { state: 'disabled', reason: 'the disk buffer is not built yet' },
      warnings: pushSettings.enabled ? warningsNow : [...warningsNow, pushSettings.reason],
      tls: { enabled: tls !== null, fingerprint: tls?.fingerprint ?? null },
      push: push.status(),
    };
  };
  const sessions = new SessionsService(system, cli, 'pi', agents.hub);
  const connections = new ConnectionRegistry();
  const hub = new StreamHub({ system, meta: (id) => sessions.meta(id), agentStates: agents.hub, log });
  const devices = new DeviceRegistry(tokens);
  const pairing = new PairingService(new PairingStore(paths.authDir), tokens, devices);
  const push = new PushService({
    settings: pushSettings,
    devices,
    inForeground: (tokenId) => connections.count({ kind: 'stream', tokenId, liveOnly: true }) > 0,
    describe: (id) => (system.sessionIds().includes(id) ? sessions.meta(id) : null),
    agentName: 'pi',
    now: Date.now,
    log,
  });
  // Edge-triggered: entering awaiting-input alerts once; an agent reconnecting while it waits
  // (the same state again) does not.
  const unsubscribePush = agents.hub.subscribeEvery((id, fact) => {
    const before = lastAgentState.get(id);
    lastAgentState.set(id, fact.value);
    if (fact.value === 'awaiting-input' && before !== 'awaiting-input') push.awaitingInput(id);
  });
  // A revoked token (here or by `tether auth revoke`) loses its open sockets at once.
  const stopWatchingTokens = tokens.watchRevocations((record) => {
    const closed = connections.closeToken(record.id);
    log.info({ tokenId: record.id, name: record.name, closed }, 'token revoked: its connections are closed');
  });
  const stream: StreamHandle = {
    has: (id) => system.sessionIds().includes(id),
    open: (id, kind, link) => hub.open(id, kind, link),
    input: (id, message) => sessions.input(id, message),
  };
  const server = await buildServer({
    logger: log,
    tokens,
    health: { health },
    sessions,
    ...(tls ? { tls: { key: tls.key, cert: tls.cert } } : {}),
    plugins: [
      async (app) => void (await app.register(streamRoutes, { stream, connections, pingIntervalMs: config.stream.ping_interval_s * 1000 })),
      async (app) => void (await app.register(pairRoutes, { pairing })),
    ],
  });
  try {
    await listen(server, { host, port }, paths.configFile);
  } catch (err) {
    await system.stop();
    throw new CliError((err as Error).message);
  }
  const address = server.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const url = startupUrl(config, scheme, host, boundPort, local.token);
  try {
    await agents.listen(url);
  } catch (err) {
    await server.close();
    await system.stop();
    throw new CliError((err as Error).message);
  }
  const runFile = writeRunFile(paths.runDir, { pid: process.pid, url: startupUrl(config, scheme, host, boundPort, '').replace(/\?token=$/, ''), scheme, host, port: boundPort, fingerprint: tls?.fingerprint ?? null, name: config.name || hostname() });
  io.stdout.write(`${url}\n`);
  log.info({ host, port: boundPort, sessions: system.sessionIds(), name: config.name || hostname() }, 'tether is listening');

  let stopping: Promise<void> | null = null;
  return {
    url,
    routes: server.tetherRoutes,
    stop: () =>
      (stopping ??= (async () => {
        log.info('shutting down: tmux sessions keep running');
        stopWatchingTokens();
        unsubscribePush();
        push.stop();
        connections.closeAll();
        await server.close();
        hub.stop();
        await agents.stop();
        await system.stop();
        tokens.close();
        rmSync(runFile, { force: true });
        log.flush();
      })()),
  };
}
