/**
 * `tether status [--json]`: the running daemon as an operator on SSH sees it, the terminal twin
 * of the `/ops` page: health (status, watchdog, disk buffer, push, TLS, warnings), the sessions
 * with their agent state and clients, each client's connection (round trip, bytes sent,
 * reconnects, behind or not), and the actor tree with each actor's state. It asks the
 * daemon found by its run file over its own loopback connection, with the local token, and
 * pins the daemon's certificate when it serves https.
 *
 * Exit codes: 0 the daemon answered (even when degraded: the text says so), 1 it does not run
 * or does not answer. Nothing is changed: no token is created, nothing is written.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Command, Option } from 'clipanion';
import { CERT_FILE } from '../auth/certificate.js';
import { pinnedOptions } from '../reference-client/pinning.js';
import { loadConfig } from '../config/load.js';
import { resolvePaths } from '../config/paths.js';
import { packageVersion } from '../config/version.js';
import type { OpsActorView } from '../ops/inspector.js';
import type { Ask, Stop } from '../protocol/frames.js';
import type { AnswerEntry } from '../service/answers/answer-log.js';
import type { ClientConnection } from '../service/health/health.js';
import type { HealthReport } from '../transport/handles.js';
import { CliError, reportFailure } from '../runtime/fail.js';
import { readRunFile, type RunFile } from '../runtime/run-file.js';
import { AUTH_DIR_NAMES } from '../config/data-layout.js';
import type { AgentUsage } from '../protocol/usage.js';

/** How long the daemon has to answer each request. */
export const STATUS_TIMEOUT_MS = 5000;
/** Largest answer read from the daemon. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export interface StatusSession {
  readonly id: string;
  readonly description: string;
  readonly state: string;
  readonly agentState: string | null;
  readonly clients: number;
  readonly lastOutputAt: string | null;
  /** What the agent asks while it waits (absent from daemons before asks). */
  readonly ask?: Ask | null;
  /** Why the agent stopped, while it is stopped (absent from daemons before stops). */
  readonly stop?: Stop | null;
}

/** One stopped agent: why, since when, and a usage limit's reset. */
function stopRow(session: string, stop: Stop): string {
  const resets = stop.resetsAt !== undefined ? `, resets ${stop.resetsAt}${stop.limit !== undefined ? ` (${stop.limit})` : ''}` : '';
  const words = stop.message !== '' ? `: ${stop.message}` : '';
  return `${session}: ${stop.agent} ${stop.kind} at ${stop.stoppedAt}${resets}${words}`;
}

/** Each agent's windows, one line each: `claude five_hour 72 % resets <ISO> (binding)`. */
function usageRows(usage: readonly AgentUsage[]): string[] {
  const rows = usage.flatMap((u) =>
    u.windows.map(
      (w) =>
        `${u.agent} ${w.name} ${w.usedPercent} %${w.resetsAt !== undefined ? ` resets ${w.resetsAt}` : ''}${u.binding === w.name ? ' (binding)' : ''}`,
    ),
  );
  return rows.length > 0 ? rows : ['no agent reported its usage windows yet'];
}

/** Everything `tether status` shows. */
export interface StatusReport {
  readonly daemon: { readonly url: string; readonly pid: number; readonly name: string };
  /** This command's own tether version: when the daemon's differs, it runs an older (or newer) install. */
  readonly cliVersion: string;
  readonly health: HealthReport;
  readonly sessions: readonly StatusSession[];
  readonly actors: readonly OpsActorView[];
  /** The last answers to asks, newest last (docs/operations.md). */
  readonly answers: readonly AnswerEntry[];
  /** Each agent's account usage windows (docs/api.md "Usage"). */
  readonly usage: readonly AgentUsage[];
}

/** A state value as one line: `running.link.attached.live, running.pane.alive`. */
export function stateLine(value: unknown): string {
  const out: string[] = [];
  const walk = (prefix: string, v: unknown): void => {
    if (typeof v === 'string') out.push(prefix ? `${prefix}.${v}` : v);
    else if (v && typeof v === 'object')
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) walk(prefix ? `${prefix}.${k}` : k, child);
  };
  walk('', value);
  return out.join(', ');
}

const duration = (s: number): string => {
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
};

const ms = (v: number | null): string => (v === null ? '-' : `${Math.round(v)} ms`);
const seconds = (v: number): string => `${(v / 1000).toFixed(1)} s`;
const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / (1024 * 1024)).toFixed(1)} MB`;

/** One row per live client: its link, its device's reconnects and away time, behind or not. */
function clientRows(connections: readonly ClientConnection[]): string[] {
  if (connections.length === 0) return ['no clients'];
  return table([
    ['CLIENT', 'SESSION', 'DEVICE', 'STATE', 'RTT', 'SMOOTHED', 'SENT', 'CONNECTED', 'RECONNECTS', 'AWAY'],
    ...connections.map((c) => [
      c.actor?.split('/').pop() ?? c.kind,
      c.session,
      c.device,
      c.state ?? '-',
      ms(c.rttMs),
      ms(c.srttMs),
      bytes(c.bytesSent),
      duration(Math.floor(c.connectedS)),
      String(c.reconnects),
      c.reconnects === 0 ? '-' : `${seconds(c.awayMs)} in all, last ${seconds(c.lastAwayMs ?? 0)}`,
    ]),
  ]);
}

/** The last answers, newest first: when, where, what was asked, what was chosen, by whom, taken or not. */
function answerRows(answers: readonly AnswerEntry[]): string[] {
  if (answers.length === 0) return ['no answers yet'];
  return table([
    ['WHEN', 'SESSION', 'ASKED', 'CHOICE', 'BY', 'LANDED'],
    ...[...answers]
      .reverse()
      .slice(0, 10)
      .map((a) => [
        a.at,
        a.session,
        `${a.agent} ${a.kind}${a.tool ? ` ${a.tool}` : ''}: ${[...a.concern].slice(0, 50).join('')}`,
        a.label ?? a.choice ?? '?',
        a.by,
        a.landed ? 'yes' : 'no',
      ]),
  ]);
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** The report as text, for a terminal. */
export function renderStatus(r: StatusReport): string {
  const h = r.health;
  const lines: string[] = [];
  lines.push(`tether ${h.version} (${r.daemon.name}): ${h.status}, up ${duration(h.uptime)}, pid ${r.daemon.pid}, ${r.daemon.url}`);
  if (h.version !== r.cliVersion)
    lines.push(
      `version mismatch: the daemon runs tether ${h.version}, this command is tether ${r.cliVersion}: run "tether restart" to serve with ${r.cliVersion}`,
    );
  lines.push(
    `buffer: ${h.watchdog.state}${h.watchdog.reason ? ` (${h.watchdog.reason})` : ''}, ${h.bufferMb} MB, ${h.diskFreeGb} GB free` +
      `   push: ${h.push.configured ? `${h.push.sent} sent, ${h.push.failed} failed` : 'off'}` +
      `   tls: ${h.tls.enabled ? 'on' : 'off'}   clients: ${h.clients}`,
  );
  if (h.push.lastError) lines.push(`last push failure: ${h.push.lastError.at} ${h.push.lastError.status} ${h.push.lastError.reason}`);
  for (const w of h.warnings) lines.push(`warning: ${w}`);
  lines.push('');
  if (r.sessions.length === 0) lines.push('no sessions');
  else {
    lines.push(
      ...table([
        ['SESSION', 'STATE', 'AGENT', 'CLIENTS', 'LAST OUTPUT', 'DESCRIPTION'],
        ...r.sessions.map((s) => [s.id, s.state, s.agentState ?? '-', String(s.clients), s.lastOutputAt ?? '-', s.description]),
      ]),
    );
  }
  const asking = r.sessions.filter((s) => s.ask);
  if (asking.length > 0) {
    lines.push('', 'ASKS');
    for (const s of asking) {
      const a = s.ask!;
      lines.push(`${s.id}: ${a.agent} asks (${a.kind}${a.tool ? ` ${a.tool}` : ''}): ${a.concern}`);
      lines.push(`  choices: ${a.choices.map((c) => `${c.id} "${c.label}"`).join(', ')}  ask ${a.id}`);
    }
  }
  const stopped = r.sessions.filter((s) => s.stop);
  if (stopped.length > 0) {
    lines.push('', 'STOPS');
    for (const s of stopped) lines.push(stopRow(s.id, s.stop!));
  }
  lines.push('', 'USAGE', ...usageRows(r.usage));
  lines.push('', 'ANSWERS', ...answerRows(r.answers));
  lines.push('', 'CLIENTS', ...clientRows(h.connections ?? []));
  lines.push('', 'ACTORS');
  const kids = new Map<string | null, OpsActorView[]>();
  const ids = new Set(r.actors.map((a) => a.id));
  for (const a of r.actors) {
    const p = a.parent !== null && ids.has(a.parent) ? a.parent : null;
    kids.set(p, [...(kids.get(p) ?? []), a]);
  }
  const rows: string[][] = [];
  const walk = (parent: string | null, depth: number): void => {
    for (const a of [...(kids.get(parent) ?? [])].sort((x, y) => x.id.localeCompare(y.id))) {
      rows.push([`${'  '.repeat(depth)}${a.id}`, a.machine ?? '-', a.machine ? stateLine(a.value) : '']);
      walk(a.id, depth + 1);
    }
  };
  walk(null, 0);
  lines.push(...table([['ACTOR', 'MACHINE', 'STATE'], ...rows]));
  return lines.join('\n') + '\n';
}

/** GETs `path` from the daemon as JSON; refusals become one clear line. */
function getJson<T>(
  run: RunFile,
  host: string,
  token: string,
  path: string,
  tls: { ca: string; checkServerIdentity: NonNullable<ReturnType<typeof pinnedOptions>['checkServerIdentity']> } | null,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const options = {
      host,
      port: run.port,
      path,
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
      timeout: STATUS_TIMEOUT_MS,
    };
    const req = tls ? httpsRequest({ ...options, ...tls }) : httpRequest(options);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${STATUS_TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(new CliError(`the daemon at ${run.url} does not answer ${path}: ${err.message}`)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) {
          reject(
            new CliError(
              `the daemon answered ${path} with ${res.statusCode}${res.statusCode === 401 ? ': the local token was not accepted (was "local" revoked? restart tether)' : ''}`,
            ),
          );
          return;
        }
        try {
          resolve(JSON.parse(body) as T);
        } catch {
          reject(new CliError(`the daemon's answer to ${path} is not JSON`));
        }
      });
    });
    req.end();
  });
}

/** Asks the running daemon for everything `tether status` shows. */
export async function collectStatus(env: NodeJS.ProcessEnv): Promise<StatusReport> {
  const paths = resolvePaths(env);
  await loadConfig(paths, env);
  const run = readRunFile(paths.runDir);
  if (!run) throw new CliError('tether is not running (no live daemon in the run file): start it with "tether serve"');
  let token: string;
  try {
    token = readFileSync(join(paths.authDir, AUTH_DIR_NAMES.localToken), 'utf8').trim();
  } catch {
    throw new CliError(`the local token cannot be read from ${paths.authDir}: run this as the user that runs tether`);
  }
  // A daemon bound to every address is asked over loopback.
  const host = run.host === '0.0.0.0' ? '127.0.0.1' : run.host === '::' ? '::1' : run.host;
  let tls: Parameters<typeof getJson>[4] = null;
  if (run.scheme === 'https') {
    if (!run.fingerprint) throw new CliError('the daemon serves https but its run file has no certificate fingerprint');
    const pem = readFileSync(join(paths.tlsDir, CERT_FILE), 'utf8');
    const pinned = pinnedOptions(pem, run.fingerprint);
    tls = { ca: pem, checkServerIdentity: pinned.checkServerIdentity };
  }
  const [health, sessions, ops, answers, usage] = await Promise.all([
    getJson<HealthReport>(run, host, token, '/health', tls),
    getJson<StatusSession[]>(run, host, token, '/sessions', tls),
    getJson<{ actors: OpsActorView[] }>(run, host, token, '/ops/actors', tls),
    // A daemon from before asks has no answer log to show.
    getJson<{ answers: AnswerEntry[] }>(run, host, token, '/ops/answers', tls).catch(() => ({ answers: [] })),
    // Nor one from before usage windows any usage.
    getJson<AgentUsage[]>(run, host, token, '/usage', tls).catch(() => []),
  ]);
  return {
    daemon: { url: run.url, pid: run.pid, name: run.name },
    cliVersion: packageVersion(),
    health,
    sessions,
    actors: ops.actors,
    answers: answers.answers,
    usage,
  };
}

export class StatusCommand extends Command {
  static override paths = [['status']];
  static override usage = Command.Usage({
    description: 'Show the running daemon: health, sessions, agent states, clients and the actor tree',
    details: `
      The terminal view of the /ops page, for operators on SSH: health (status, disk buffer and
      watchdog, push, TLS, warnings), one line per session (state, agent state, clients, last
      output), what each waiting agent asks (its choices and the ask's id), the last answers
      (who answered what, and whether the agent took it), one line per connected client (its session and device, its stream state or
      "behind", the last and the smoothed round trip of its pings, bytes sent, how long it has
      been connected, how often its device reconnected and how long it was away), and every
      actor with its machine and current state. A daemon running another
      tether version than this command (an upgrade it has not picked up) is named on the second
      line, with the fix: "tether restart". With --json, one object.
      Exits 1 when tether is not running or does not answer.
    `,
    examples: [
      ['Show the daemon', 'tether status'],
      ['For a script', 'tether status --json'],
    ],
  });

  json = Option.Boolean('--json', false, { description: 'Print one JSON object instead of text' });

  async execute(): Promise<number> {
    try {
      const report = await collectStatus(process.env);
      this.context.stdout.write(this.json ? JSON.stringify(report, null, 2) + '\n' : renderStatus(report));
      return 0;
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }
}
