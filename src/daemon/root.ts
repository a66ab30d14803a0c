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
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SessionsService } from '../service/sessions/sessions.service.js';
import { connectSessionEvents } from '../service/sessions/session-events.js';
import { createDefaultSessionIfNone } from '../service/sessions/default-session.js';
import { makeWorkspaces } from './workspaces.js';
import { SessionRecords } from '../restore/records.js';
import { RecordKeeper } from '../restore/record-keeper.js';
import { isUnrestorable, unrestorableSessions } from '../restore/at-start.js';
import { restoreAtStartAndRetry, restorerOf } from '../restore/restoring.js';
import { SidecarSystem } from '../actors/system.js';
import { OpsInspector } from '../ops/inspector.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import { DeviceRegistry } from '../auth/devices.js';
import { PairingService } from '../auth/pairing.js';
import { PairingStore } from '../auth/pairing-store.js';
import { TokenStore } from '../auth/token-store.js';
import { StreamHub } from '../stream/stream-hub.js';
import { closeConnectionsOfRevokedTokens, ConnectionRegistry } from '../transport/stream/connections.js';
import { agentKinds } from '../agent/contract/kinds.js';
import { loadConfig, parseBindAddress } from '../config/load.js';
import { makeLogger } from '../runtime/logger.js';
import { resolvePaths } from '../config/paths.js';
import { buildServer, listen } from '../transport/server.js';
import { AgentService } from '../agent/hub/agent-service.js';
import { agentSocketPath } from '../agent/wire/socket-path.js';
import { UNNAMED_SESSION_PREFIX } from '../agent/contract/adapters.js';
import { resolveAgentProgram, type AgentResume } from '../service/agent-programs/agent-program.js';
import { prepareAgents } from '../service/agent-programs/agents.js';
import { asRefusal } from '../runtime/fail.js';
import { daemonTmuxCli, usableTmux } from '../tmux/daemon-tmux.js';
import { retireStaleLinks } from '../tmux/control/control-ledger.js';
import { certificateIfOn, keepCertificate, schemeOf } from '../auth/daemon-certificate.js';
import { localToken } from '../auth/local-token.js';
import { daemonUrl, startupUrl } from '../config/daemon-url.js';
import { startWarnings } from '../config/start-warnings.js';
import { RUN_DIR_NAMES } from '../config/data-layout.js';
import { makeDiskBuffers, setUpBuffers } from '../actors/disk-buffers-setup.js';
import { openingGate } from '../transport/opening-gate.js';
import { preparePush } from '../push/settings.js';
import { startPush } from './push.js';
import type { DaemonIo, RunningDaemon } from './daemon-io.js';
import { writeRunFile } from '../runtime/run-file.js';
import { livePaneCounter } from '../runtime/heap.js';
import { defaultSessionDirectory } from '../service/sessions/directory.js';
import { packageVersion } from '../config/version.js';
import { makeWorkbench } from './workbench.js';
import { hostPresence } from '../service/health/presence.js';
import { startAnswers } from './answers.js';
import { startPrompts } from './prompts.js';
import { startUsage } from './usage.js';
import { daemonHttp } from './http.js';

export async function runDaemon(io: DaemonIo): Promise<RunningDaemon> {
  const paths = resolvePaths(io.env);
  const { config, warnings: configWarnings } = await loadConfig(paths, io.env, { agentKinds: agentKinds() });
  const target = await usableTmux(config.tmux.socket);
  const { host, port } = parseBindAddress(config.bindAddress);
  // The default agent is resolved before anything starts: a missing one is the start's refusal.
  const defaultAgent = resolveAgentProgram(config.agent, io.env);

  // Log lines reach the file only once the port is held (`openLogFile`); stderr has them at once.
  const { log, openFile: openLogFile, close: closeLog } = makeLogger(paths, io.env, io.stderr);
  const configured = prepareAgents(config, io.env, paths.dataDir, agentSocketPath(paths.runDir), log);
  const tls = await certificateIfOn(config, paths.tlsDir, host, log);
  const warnings = startWarnings(configWarnings, tls !== null, host, paths.configFile, log);
  const scheme = schemeOf(tls);
  const presence = hostPresence({ config, dataDir: paths.dataDir, bindHost: host, tls: tls !== null, version: packageVersion(), log });
  const pushSettings = await preparePush(config.push, paths.configFile);
  const tokens = await TokenStore.open(paths.authDir);

  const startedAt = Date.now();
  const cli = await daemonTmuxCli(target, log);
  // The /ops view: inspection of every actor system (nothing is sent while no one watches).
  const ops = new OpsInspector();
  const buffers = makeDiskBuffers(config, paths.buffersDir, ops, { freeBytes: io.freeBytes, now: io.bufferClock }, log);
  const sessionDirectories = { defaultSession: config.agent.default_session, daemonCwd: io.cwd, home: io.env.HOME };
  const launchFor = (id: string, name?: string, resume?: AgentResume) =>
    configured.launch(id, defaultSessionDirectory(id, sessionDirectories), name, resume);
  // What it takes to bring each session back (docs/reliability.md).
  const records = new SessionRecords(paths.dataDir);
  const restoring = { enabled: config.agent.restore, cli, records, agent: launchFor, now: Date.now, log };

  const system = new SidecarSystem({
    inspect: ops.observer(),
    cli,
    target,
    ringBytes: config.stream.ring_kb * 1024,
    agent: launchFor,
    now: Date.now,
    log,
    deleteBuffer: (id) => buffers.delete(id),
    restore: restorerOf(restoring),
    notices: AgentService.noticeNumbers(),
  });
  const agents = new AgentService({
    cli,
    socketPath: agentSocketPath(paths.runDir),
    namingCommand: defaultAgent.argv,
    namingModel: config.agent.naming_model,
    env: io.env,
    now: Date.now,
    log,
    inspect: (id) => ops.observer({ label: 'agent', parent: sessionActorId(id) }),
    version: packageVersion(),
    agentKind: (name) => configured.kind(name),
    storedConversation: (id) => records.read(id)?.conversation ?? null,
  });
  // Each session's record, kept in step with it.
  const keeper = new RecordKeeper({
    records,
    cli,
    agentCommand: (id, name) => launchFor(id, name).command,
    sessionFile: (id) => agents.sessionFile(id),
    conversation: (id) => agents.conversation(id),
    reservedSeq: (id) => system.reservedSeq(id),
    now: Date.now,
    log,
    query: (command) => system.queryTmux(command),
  });

  const connections = new ConnectionRegistry();
  const workspaces = makeWorkspaces({
    config,
    dataDir: paths.dataDir,
    cli,
    system,
    records,
    isUnrestorable: (id) => isUnrestorable(records, id),
    log,
  });
  const sessions = new SessionsService({
    system,
    cli,
    namePrefix: UNNAMED_SESSION_PREFIX,
    agents: agents.states,
    clients: (id) => connections.liveClients(id),
    records: {
      unrestorable: () => unrestorableSessions(records),
      record: (id) => records.read(id),
    },
    catalog: configured.catalog(agents.states, (id) => records.read(id)?.cwd ?? null),
    workspaces: workspaces.service,
  });
  const workbench = makeWorkbench({
    config,
    dataDir: paths.dataDir,
    buffersDir: paths.buffersDir,
    system,
    buffers,
    isUnrestorable: (id) => isUnrestorable(records, id),
    input: (id, message) => sessions.input(id, message),
    now: io.uploadsClock ?? Date.now,
    log,
  });
  const answers = startAnswers({
    agents,
    system,
    cli,
    sessions,
    dataDir: paths.dataDir,
    now: Date.now,
    log,
    kept: (id, schedule) => keeper.noteContinue(id, schedule),
    inspect: (id) => ops.observer({ label: 'continue', parent: sessionActorId(id) }),
  });
  const hub: StreamHub = new StreamHub({ sessions: system, meta: (id) => sessions.meta(id), agentStates: answers.states, log, ops });
  const prompts = startPrompts({ agents, system, cli, sessions, hub, records, keeper, ops, now: Date.now, log });
  const usage = startUsage({ agents, thresholds: config.push.usage_thresholds, ops, now: Date.now });
  const disconnectSessionEvents = connectSessionEvents({
    system,
    agents,
    keeper,
    sessions,
    buffers,
    uploads: workbench,
    livePanes: livePaneCounter(),
    forgets: [answers.continues, answers.resets, prompts.service],
  });
  const devices = new DeviceRegistry(tokens);
  const pairing = new PairingService(new PairingStore(paths.authDir), tokens, devices);
  const push = await startPush({
    settings: pushSettings,
    devices,
    daemon: presence,
    inForeground: (tokenId) => connections.inForeground(tokenId),
    sessions,
    agentKinds: configured,
    agents: agents.states,
    events: config.push.events,
    onSessionEnded: (listener) => system.onSessionEnded(listener),
    onAttention: (listener) => system.onAttention(listener),
    onLimitReset: (listener) => answers.resets.onReset(listener),
    onPromptFailed: prompts.onFailed,
    onUsageWarning: (listener) => usage.warnings.onWarning(listener),
    activityDelays: io.activityDelays,
    inspect: (label) => ops.observer({ label }),
    now: Date.now,
    log,
  });
  const http = daemonHttp({
    config,
    presence,
    startedAt,
    system,
    buffers,
    push,
    connections,
    warnings,
    tls,
    records,
    sessions,
    hub,
    pairing,
    ops,
    answers,
    prompts,
    usage,
    workbench,
    workspaces,
  });
  // A revoked token (here or by `tether auth revoke`) loses its open sockets at once.
  const stopWatchingTokens = closeConnectionsOfRevokedTokens(tokens, connections, log);
  // Requests wait until the sessions are adopted: the port is held before anything is touched.
  const ready = openingGate();
  const server = await buildServer({
    ready: ready.opened,
    logger: log,
    peerLimits: io.peerLimits,
    tokens,
    health: { health: http.health },
    sessions: { sessions, continueOf: (id) => answers.continues.of(id) },
    tls,
    plugins: http.plugins,
  });
  // A refused start stops what it started (timers, the push client) and leaves with its one line.
  const refuse = async (err: unknown): Promise<never> => {
    stopWatchingTokens();
    push.stop();
    await closeLog();
    throw asRefusal(err);
  };
  const refuseListening = async (err: unknown): Promise<never> => {
    await server.close();
    return refuse(err);
  };
  // The port and the agent socket are held before anything is touched: a second daemon (the
  // port taken, or another daemon answering on this data dir's agent socket) is refused having
  // adopted no session, written no buffer, record, log line or certificate and removed nothing.
  const bound = await listen(server, { host, port }, paths.configFile).catch((err: unknown) => refuse(err));
  // The local token: read, or made on a first start (only then is it written, the port held).
  const token = await localToken(tokens, paths.authDir).catch((err: unknown) => refuseListening(err));
  const url = startupUrl(config, scheme, host, bound.port, token);
  await agents.listen(url).catch((err: unknown) => refuseListening(err));
  // Held: from here this daemon changes files. The log lines so far, the certificate and the id
  // a first start made, Claude's settings, then the uploads clean-up.
  openLogFile();
  try {
    keepCertificate(tls, log);
    presence.keep();
  } catch (err) {
    await agents.stop();
    return refuseListening(err);
  }
  configured.writeSettings();
  workbench.start();
  const releaseLedger = await retireStaleLinks(cli, target, join(paths.runDir, RUN_DIR_NAMES.controlLedger), log);
  await setUpBuffers(buffers, cli, log);
  system.start();
  await system.booted().finally(ready.open);
  // Only now, with the port and the agent socket held: a refused start leaves no new session
  // behind, and the agent in it finds its daemon listening. Sessions lost with their tmux server
  // while tether was not running (a reboot) come back first.
  const retry = await restoreAtStartAndRetry({ ...restoring, system, retryIntervalMs: io.restoreRetryMs });
  await answers.continues.restore(system.sessionIds()); // the continues tmux holds are armed again
  await prompts.service.restore(system.sessionIds()); // and the prompts queued, typed in their turn
  await createDefaultSessionIfNone(system, config.agent.default_session, log);
  const runFile = writeRunFile(paths.runDir, {
    pid: process.pid,
    url: daemonUrl(config, scheme, host, bound.port),
    scheme,
    host,
    port: bound.port,
    fingerprint: tls?.fingerprint ?? null,
    id: presence.id,
    name: presence.name,
    version: packageVersion(),
    cwd: io.cwd,
  });
  io.stdout.write(`${url}\n`);
  log.info({ host, port: bound.port, sessions: system.sessionIds(), name: presence.name, id: presence.id }, 'tether is listening');
  presence.advertise(bound.address, bound.port, tls?.fingerprint ?? null);

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
        prompts.stop();
        usage.stop();
        connections.closeAll();
        await retry.stop();
        await server.close();
        hub.stop();
        await agents.stop();
        disconnectSessionEvents();
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
