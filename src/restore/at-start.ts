/**
 * Sessions that outlive their tmux server (docs/reliability.md "Restoring sessions"). While the
 * daemon runs, a session whose server died is brought back by its own actor (the session
 * machine's `restoring`). This module does the rest: at start-up it finds the records whose
 * session is missing from tmux and decides, per record, whether it was lost (restore it) or
 * removed on purpose while tether was not running (forget it); and it says which sessions could
 * not be restored, and why, for health and the session list.
 *
 * The rule: a record whose tmux server is still the one it lived in (same pid and start time)
 * names a session someone killed there on purpose. Any other server, or none, means the session
 * went with its server (a crash, a kill, a reboot) and is restored, unless its agent had exited.
 */
import type { Logger } from '../log.js';
import type { SessionRecords } from './records.js';
import type { TmuxCli } from '../tmux/exec.js';

/** A session that could not be brought back, as health and the session list show it. */
export interface UnrestorableSession {
  readonly id: string;
  readonly reason: string;
  readonly at: string;
}

export interface RestoreAtStartDeps {
  readonly records: SessionRecords;
  readonly cli: TmuxCli;
  readonly system: { sessionIds(): string[]; restoreSession(id: string): Promise<void> };
  readonly log: Logger;
}

/** The running tmux server's pid and start time, or null when none runs. */
async function currentServer(cli: TmuxCli): Promise<{ pid: number; startTime: number } | null> {
  try {
    const [pid, startTime] = (await cli.run(['display-message', '-p', '#{pid} #{start_time}'])).stdout
      .toString('utf8')
      .trim()
      .split(' ')
      .map(Number);
    return pid && Number.isInteger(startTime) ? { pid, startTime: startTime! } : null;
  } catch {
    return null;
  }
}

/**
 * At start-up, after the sessions tmux holds were adopted: restores each recorded session that is
 * missing and was lost with its server; forgets each one killed on purpose meanwhile. Resolves
 * with what it did; a session that cannot be restored is reported, and left to the retry
 * (src/restore/retry.ts), which tries it again once the reason is gone.
 */
export async function restoreAtStart(deps: RestoreAtStartDeps): Promise<{ restored: string[]; failed: string[]; forgotten: string[] }> {
  const { records, broken } = deps.records.list();
  for (const b of broken) deps.log.warn({ file: b.file, why: b.why }, 'a session record is broken and was not used');
  const known = new Set(deps.system.sessionIds());
  const server = await currentServer(deps.cli);
  const out = { restored: [] as string[], failed: [] as string[], forgotten: [] as string[] };
  for (const record of records) {
    if (record.ended || known.has(record.name)) continue;
    if (server && record.server && record.server.pid === server.pid && record.server.startTime === server.startTime) {
      // Its own server still runs without it: someone killed it there while tether was away.
      deps.records.remove(record.name);
      out.forgotten.push(record.name);
      deps.log.info({ session: record.name }, 'a recorded session was killed while tether was not running: its record is forgotten');
      continue;
    }
    try {
      await deps.system.restoreSession(record.name);
      out.restored.push(record.name);
    } catch {
      out.failed.push(record.name);
    }
  }
  return out;
}

/** Whether session `id`'s record says it could not be restored. */
export function isUnrestorable(records: SessionRecords, id: string): boolean {
  return unrestorableSessions(records).some((u) => u.id === id);
}

/** The sessions whose record says they could not be restored (shown until deleted). */
export function unrestorableSessions(records: SessionRecords): UnrestorableSession[] {
  return records
    .unrestorable()
    .flatMap((r) => (r.ended?.reason === 'unrestorable' ? [{ id: r.name, reason: r.ended.detail, at: r.ended.at }] : []));
}
