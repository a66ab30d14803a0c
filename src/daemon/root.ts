/**
 * `tether serve`: wires config, tmux, the actor system and the HTTP server, in the order docs/configuration.md "Start-up"
 * fixes: refuse early with one clear line (bad config, old tmux, port in use, another daemon on the data dir) before
 * touching a session, a buffer or a record; then reattach to every tether session; create the default session when there
 * is none; print exactly one line on stdout once listening; shut down cleanly on a signal, leaving tmux sessions running.
 *
 * Invariant: nothing changes on disk before the port is held (a first start's certificate is made in memory, the log
 * lines wait in memory, the agents' settings files and the uploads clean-up wait), and nothing but the local token of a
 * first start before the agent socket is held too: a refused daemon leaves every file as it found it.
 */
import type { ContinueSchedule } from '../protocol/continue.js';
import { rmSync } from 'node:fs';
import { isDomainError } from '../errors.js';
import { SessionsService } from '../service/sessions.service.js';
import { makeWorkspaces } from './workspaces.js';
import { SessionRecords, type SessionRecord } from '../restore/records.js';
import { RecordKeeper } from '../restore/record-keeper.js';
import { restoreAtStart, unrestorableSessions } from '../restore/at-start.js';
import { recreateSession, restoreObstacle } from '../restore/recreate.js';
import { RestoreRetry } from '../restore/retry.js';
import { SidecarSystem } from '../actors/system.js';
import { OpsInspector } from '../ops/inspector.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import { opsRoutes } from '../transport/ops.routes.js';
import { DeviceRegistry } from '../auth/devices.js';
import { PairingService } from '../auth/pairing.js';
import { PairingStore } from '../auth/pairing-store.js';
import { TokenStore } from '../auth/token-store.js';
import { preparePush } from '../push/settings.js';
import { pairRoutes } from '../transport/pair.routes.js';
import { StreamHub } from '../stream/stream-hub.js';
import { ConnectionRegistry } from '../transport/connections.js';
import { streamRoutes } from '../transport/stream.plugin.js';
import { agentKinds } from '../agent/contract/kinds.js';
import { loadConfig, parseBindAddress } from '../config/load.js';
import { makeLogger } from './logger.js';
import { resolvePaths } from '../config/paths.js';
import { healthReport, type HealthReport } from '../service/health.js';
import { buildServer, listen, type ServedRoute, type ServerOptions } from '../transport/server.js';
import { AgentService } from '../agent/hub/agent-service.js';
import { agentSocketPath } from '../agent/wire/socket-path.js';
import { UNNAMED_SESSION_PREFIX } from '../agent/contract/adapters.js';
import { resolveAgentProgram, type AgentResume } from '../service/agent-program.js';
import { prepareAgents } from '../service/agents.js';
import { CliError } from './fail.js';
import { daemonTmuxCli, keepCertificate, loadCertificate, localToken } from './start-steps.js';
import { makeDiskBuffers, plainHttpWarning, retireStaleLinks, setUpBuffers, startupUrl, usableTmux } from './start-steps.js';
import { startPush } from './push.js';
import { writeRunFile } from './run-file.js';
import { livePaneCounter } from './heap.js';
import { defaultSessionDirectory } from '../service/directory.js';
import { packageVersion } from '../config/version.js';
import { makeWorkbench } from './workbench.js';
import { hostPresence } from './presence.js';
import { startAnswers } from './answers.js';

export interface DaemonIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
  /** Free bytes on the file system of `dir` (statfs by default; tests inject a full disk). */
  readonly freeBytes?: (dir: string) => Promise<number>;
  /** The clock of the disk buffers' idle cleanup (tests move it days ahead). */
  readonly bufferClock?: () => number;
  /** The uploads' clock: when an upload is stored, and the keep-days clean-up's now (tests move it days ahead). */
  readonly uploadsClock?: () => number;
  /** How often unrestorable sessions are checked again (RESTORE_RETRY_INTERVAL_MS; tests shorten it). */
  readonly restoreRetryMs?: number;
  /** The connection limits (tests shorten them). */ readonly peerLimits?: ServerOptions['peerLimits'];
}

export interface RunningDaemon {
  readonly url: string;
  /** The server's route table (for the security suite: every route must need a token). */
  readonly routes: readonly ServedRoute[];
  stop(): Promise<void>;
}

export async function runDaemon(io: DaemonIo): Promise<RunningDaemon> {
  const paths = resolvePaths(io.env);
  const { config, warnings } = await loadConfig(paths, io.env, { agentKinds: agentKinds() });
  const target = await usableTmux(config.tmux.socket);
  const { host, port } = parseBindAddress(config.bindAddress);
  // The default agent is resolved before anything starts: a missing one is the start's refusal.
  resolveAgentProgram(config.agent, io.env);

  // Log lines reach the file only once the port is held (`openLogFile`); stderr has them at once.
  const { log, openFile: openLogFile, close: closeLog } = makeLogger(paths, io.env, io.stderr);
  const configured = prepareAgents(config, io.env, paths.dataDir, agentSocketPath(paths.runDir), log);
  for (const w of warnings) log.warn(w);
  const tls = config.tls ? await loadCertificate(paths.tlsDir, host, config.publicBaseUrl, log) : null;
  const presence = hostPresence({ config, dataDir: paths.dataDir, bindHost: host, tls: tls !== null, version: packageVersion(), log });
  const pushSettings = await preparePush(config.push, paths.configFile).catch((err: Error) => {
    throw isDomainError(err, 'push-config-invalid') ? new CliError(err.message) : err;
  });
  const tokens = await TokenStore.open(paths.authDir);

  const startedAt = Date.now();
  const cli = await daemonTmuxCli(target, log);
  // The /ops view: inspection of every actor system (nothing is sent while no one watches).
  const ops = new OpsInspector();
  const buffers = makeDiskBuffers(config, paths.buffersDir, ops, { freeBytes: io.freeBytes, now: io.bufferClock }, log);
  const sessionDirectories = { defaultSession: config.agent.default_session, daemonCwd: io.cwd, home: io.env.HOME };
  const launchFor = (id: string, name?: string, resume?: AgentResume) =>
    configured.launch(id, defaultSessionDirectory(id, sessionDirectories), name, resume);
  // What it takes to bring each session back, kept in step with it (docs/reliability.md).
  const records = new SessionRecords(paths.dataDir);
  const keeper = new RecordKeeper({
    records,
    cli,
    agentCommand: (id, name) => launchFor(id, name).command,
    sessionFile: (id) => agents.hub.sessionFile(id),
    conversation: (id) => agents.hub.conversation(id),
    reservedSeq: (id) => system.reservedSeq(id),
    now: Date.now,
    log,
  });
  /** Sessions with a live pane: with many, V8's young generation may grow (heap.ts). */
  const livePanes = livePaneCounter();
  const system = new SidecarSystem({
    inspect: ops.observer(),
    cli,
    target,
    ringBytes: config.stream.ring_kb * 1024,
    agent: launchFor,
    now: Date.now,
    log,
    deleteBuffer: (id) => buffers.delete(id),
    ...(config.agent.restore
      ? { restore: (id: string) => recreateSession({ cli, records, agent: launchFor, now: Date.now, log }, id) }
      : {}),
    notices: AgentService.noticeNumbers(),
    paneCreated: (pane) => {
      livePanes.added();
      const unbuffer = buffers.attach(pane.id, pane.stream);
      const unnotice = pane.onNotice((n) => agents.notice(pane.id, n));
      const unwatch = pane.onChange((what) => {
        if (what !== 'linked') return keeper.note(pane.id, { reservedSeq: pane.reservedSeq });
        void keeper.sync(pane.id);
        void agents.sessionSeen(pane.id); // a Codex session's rollout file is followed
      });
      return () => {
        livePanes.removed();
        for (const stop of [unwatch, unbuffer, unnotice]) stop();
      };
    },
  });
  const agents = new AgentService({
    cli,
    socketPath: agentSocketPath(paths.runDir),
    namingCommand: resolveAgentProgram(config.agent, io.env).argv,
    namingModel: config.agent.naming_model,
    env: io.env,
    now: Date.now,
    log,
    registered: () => system.requestRescan(),
    described: (id) => system.metaChanged(id),
    inspect: (id) => ops.observer({ label: 'agent', parent: sessionActorId(id) }),
    sessionFile: (id, path) => keeper.note(id, { sessionFile: path }),
    conversation: (id, conversation) => keeper.note(id, { conversation }),
    version: packageVersion(),
    agentKind: (name) => configured.kind(name),
    storedConversation: (id) => records.read(id)?.conversation ?? null,
  });
  system.onSessionEnded((id, why) => {
    if (why === 'deleted') agents.forget(id);
    else void keeper.sync(id); // the agent exited: the record says so, and it is not restored
  });
  // A session that ended (deleted, killed on purpose, or lost with restoring off) is not to come
  // back; one that could not be restored keeps its record, which says why.
  system.onSessionFinal((id, final) => {
    if (final === 'ended') keeper.forget(id);
  });
  system.onAttention((id, a) => a.kind === 'agent-exited' && agents.exited(id, a)); // its `exited` stop
  system.onMetaChanged((id) => {
    // An agent that reports by hooks has no connection whose close says it exited: this does.
    if (system.session(id)?.exited) agents.hub.paneExited(id);
    void keeper.sync(id);
  });

  const scheme = tls ? 'https' : 'http';
  const plainHttp = plainHttpWarning(tls !== null, host, paths.configFile);
  if (plainHttp) {
    warnings.push(plainHttp);
    log.warn(plainHttp);
  }
  const isUnrestorable = (id: string) => unrestorableSessions(records).some((u) => u.id === id);
  const workspaces = makeWorkspaces({ config, dataDir: paths.dataDir, cli, system, records, isUnrestorable, log });
  const sessions = new SessionsService({
    system,
    cli,
    namePrefix: UNNAMED_SESSION_PREFIX,
    agents: agents.hub,
    // Live clients only: a socket whose pong is overdue is not counted (it is being closed).
    // Counted without building each connection's figures: the list asks once per session.
    clients: (id: string): number =>
      connections.count({ kind: 'stream', sessionId: id, liveOnly: true }) +
      connections.count({ kind: 'side', sessionId: id, liveOnly: true }),
    deleted: (id, keepBuffer) => {
      keeper.forget(id);
      workbench.sessionDeleted(id);
      // An unrestorable session has no actor to delete its buffer.
      if (!keepBuffer && !system.hasSession(id)) void buffers.delete(id).catch(() => undefined);
    },
    records: {
      unrestorable: () => unrestorableSessions(records),
      record: (id) => records.read(id),
    },
    catalog: configured.catalog(agents.hub, (id) => records.read(id)?.cwd ?? null),
    workspaces: workspaces.service,
  });
  const workbench = makeWorkbench({
    config,
    dataDir: paths.dataDir,
    buffersDir: paths.buffersDir,
    system,
    buffers,
    isUnrestorable,
    input: (id, message) => sessions.input(id, message),
    now: io.uploadsClock ?? Date.now,
    log,
  });
  const kept = (id: string, s: ContinueSchedule) => keeper.note(id, { continue: JSON.stringify(s) }); // restored with its session
  const answers = startAnswers({ hub: agents.hub, system, cli, sessions, dataDir: paths.dataDir, now: Date.now, log, kept });
  const connections = new ConnectionRegistry();
  const hub: StreamHub = new StreamHub({ sessions: system, meta: (id) => sessions.meta(id), agentStates: answers.states, log, ops });
  const devices = new DeviceRegistry(tokens);
  const pairing = new PairingService(new PairingStore(paths.authDir), tokens, devices);
  const push = await startPush({
    settings: pushSettings,
    devices,
    daemon: presence,
    inForeground: (tokenId) => connections.count({ kind: 'stream', tokenId, liveOnly: true }) > 0,
    describe: async (id) => (system.hasSession(id) ? await sessions.meta(id) : null),
    agents: agents.hub,
    kindOf: (name) => configured.kind(name),
    events: config.push.events,
    onSessionEnded: (listener) => system.onSessionEnded(listener),
    onAttention: (listener) => system.onAttention(listener),
    onLimitReset: (listener) => answers.resets.onReset(listener),
    now: Date.now,
    log,
  });
  const health = (): HealthReport =>
    healthReport({
      version: packageVersion(),
      presence: presence.report,
      startedAt,
      now: Date.now,
      system,
      buffers,
      push,
      connections: () => connections.clients(),
      startWarnings: warnings,
      tls: { enabled: tls !== null, fingerprint: tls?.fingerprint ?? null },
      restore: { enabled: config.agent.restore, unrestorable: () => unrestorableSessions(records) },
    });
  // A revoked token (here or by `tether auth revoke`) loses its open sockets at once.
  const stopWatchingTokens = tokens.watchRevocations((record) => {
    const closed = connections.closeToken(record.id);
    log.info({ tokenId: record.id, name: record.name, closed }, 'token revoked: its connections are closed');
  });
  // Requests wait until the sessions are adopted: the port is held before anything is touched.
  let booted!: () => void;
  const ready = new Promise<void>((resolve) => (booted = resolve));
  const server = await buildServer({
    ready,
    logger: log,
    ...(io.peerLimits ? { peerLimits: io.peerLimits } : {}),
    tokens,
    health: { health },
    sessions: answers.sessions,
    ...(tls ? { tls: { key: tls.key, cert: tls.cert } } : {}),
    plugins: [
      async (app) =>
        void (await app.register(streamRoutes, {
          stream: hub,
          sessions,
          answers: answers.service,
          connections,
          pingIntervalMs: config.stream.ping_interval_s * 1000,
        })),
      async (app) => void (await app.register(pairRoutes, { pairing, daemon: presence })),
      async (app) => void (await app.register(opsRoutes, { ops, connections })),
      answers.plugin,
      ...workbench.plugins,
      workspaces.plugin,
    ],
  });
  // A refused start stops what it started (timers, the push client) and leaves with its one line.
  const refuse = async (err: unknown, listening: boolean): Promise<never> => {
    stopWatchingTokens();
    push.stop();
    if (listening) await server.close();
    await closeLog();
    throw err instanceof CliError ? err : new CliError((err as Error).message);
  };
  // The port and the agent socket are held before anything is touched: a second daemon (the
  // port taken, or another daemon answering on this data dir's agent socket) is refused having
  // adopted no session, written no buffer, record, log line or certificate and removed nothing.
  try {
    await listen(server, { host, port }, paths.configFile);
  } catch (err) {
    return refuse(err, false);
  }
  const address = server.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  // The local token: read, or made on a first start (only then is it written, the port held).
  const token = await localToken(tokens, paths.authDir).catch((err: unknown) => refuse(err, true));
  const url = startupUrl(config, scheme, host, boundPort, token);
  try {
    await agents.listen(url);
  } catch (err) {
    return refuse(err, true);
  }
  // Held: from here this daemon changes files. The log lines so far, the certificate and the id
  // a first start made, Claude's settings, then the uploads clean-up.
  openLogFile();
  try {
    if (tls) keepCertificate(tls, log);
    presence.keep();
  } catch (err) {
    await agents.stop();
    return refuse(err, true);
  }
  configured.writeSettings();
  workbench.start();
  const releaseLedger = await retireStaleLinks(cli, target, paths.runDir, log);
  await setUpBuffers(buffers, cli, log);
  system.start();
  try {
    await system.booted();
  } finally {
    booted();
  }
  // Only now, with the port and the agent socket held: a refused start leaves no new session
  // behind, and the agent in it finds its daemon listening. Sessions lost with their tmux server
  // while tether was not running (a reboot) come back first.
  let retry: RestoreRetry | null = null;
  if (config.agent.restore) {
    const done = await restoreAtStart({ records, cli, system, log });
    if (done.restored.length + done.failed.length > 0) log.info(done, 'sessions lost with their tmux server were restored');
    // Those that could not be are tried again once what kept them from it is gone.
    const obstacle = (r: SessionRecord) => restoreObstacle({ cli, agent: launchFor }, r);
    retry = RestoreRetry.started({ records, system, obstacle, now: Date.now, log, intervalMs: io.restoreRetryMs });
  }
  await answers.continues.restore(system.sessionIds()); // the continues tmux holds are armed again
  if (system.sessionIds().length === 0) {
    await system.createSession(config.agent.default_session, 'cli').catch((err: Error) => {
      log.error({ err: err.message }, 'the default session could not be created');
    });
  }
  const runFile = writeRunFile(paths.runDir, {
    pid: process.pid,
    url: startupUrl(config, scheme, host, boundPort, '').replace(/\?token=$/, ''),
    scheme,
    host,
    port: boundPort,
    fingerprint: tls?.fingerprint ?? null,
    id: presence.id,
    name: presence.name,
    version: packageVersion(),
    cwd: io.cwd,
  });
  io.stdout.write(`${url}\n`);
  log.info({ host, port: boundPort, sessions: system.sessionIds(), name: presence.name, id: presence.id }, 'tether is listening');
  presence.advertise(typeof address === 'object' && address ? address.address : host, boundPort, tls?.fingerprint ?? null);

  let stopping: Promise<void> | null = null;
  return {
    url,
    routes: server.tetherRoutes,
    stop: () =>
      (stopping ??= (async () => {
        log.info('shutting down: tmux sessions keep running');
        stopWatchingTokens();
        await presence.stop(); // goodbye packets, while the network still reaches this daemon
        workbench.stop();
        push.stop();
        answers.stop();
        connections.closeAll();
        await retry?.stop();
        await server.close();
        hub.stop();
        await agents.stop();
        await system.stop();
        releaseLedger();
        await buffers.stop();
        tokens.close();
        rmSync(runFile, { force: true });
        log.flush();
        await closeLog();
      })()),
  };
}
