/**
 * The ledger of the daemon's control clients: the pid of every `tmux -C` process it started
 * and that has not ended, kept in a file, so that the next daemon can retire the ones a dead
 * daemon left behind.
 *
 * Why: a daemon that is SIGKILLed (or crashes) leaves its control clients attached. tmux 3.3a
 * keeps a control client whose reader vanished with output still queued attached for good
 * (it waits for output no one will read), and one that was still in its handshake leaves only
 * when that handshake ends. Either way they go at a moment nobody chose, and a client leaving
 * notifies every control client (%client-detached), also one in its handshake, which crashes
 * the server (src/tmux/topology-gate.ts). Measured: 30 restarts mid-flood left 69 stale clients
 * on one server. So a starting daemon, before its first attach and as a writer of the gate, ends
 * the clients its predecessor started and waits until tmux has let them go.
 *
 * Invariants:
 * - Only a pid that this data dir's ledger lists AND that tmux lists as a control client of
 *   this server is ever signalled: a pid reused by another process is never touched.
 * - The ledger is written without fsync: it must outlive the daemon, not the machine (tmux
 *   does not outlive the machine either).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { platform } from 'node:os';
import { dirname } from 'node:path';
import type { Logger } from '../../log.js';
import { processExists } from '../../process.js';
import type { TmuxCli } from '../exec.js';
import type { TmuxTarget } from '../target.js';
import { topologyGate } from '../topology-gate.js';

/**
 * How long a recorded client that is alive but not yet known to tmux may take to attach. None
 * may be ended before every one of them attached or ended: ending one notifies the others, and
 * one still in its handshake would crash the server.
 */
const CONNECT_WAIT_MS = 10_000;
/** How long tmux may take to let the ended clients go. */
const RELEASE_WAIT_MS = 10_000;
const POLL_MS = 50;

export class ControlLedger {
  private readonly pids = new Set<number>();

  constructor(private readonly file: string) {}

  /** The pids the file lists (a missing or unreadable file lists none). */
  recorded(): number[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isSafeInteger(n) && n > 0);
  }

  add(pid: number): void {
    this.pids.add(pid);
    this.save();
  }

  remove(pid: number): void {
    if (this.pids.delete(pid)) this.save();
  }

  /** Starts this daemon's ledger empty (after the predecessor's clients were retired). */
  reset(): void {
    this.pids.clear();
    this.save();
  }

  private save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, [...this.pids].map((p) => `${p}\n`).join(''), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch {
      // A ledger that cannot be written costs only the clean-up after a crash, never a session.
    }
  }
}

const ledgers = new Map<string, ControlLedger>();
const keyOf = (target: TmuxTarget): string => [target.bin, ...target.socketArgs].join('\0');

/** Records the control clients of `target`'s server in `ledger` from now on; the result stops that. */
export function keepControlLedger(target: TmuxTarget, ledger: ControlLedger): () => void {
  const key = keyOf(target);
  ledgers.set(key, ledger);
  return () => {
    if (ledgers.get(key) === ledger) ledgers.delete(key);
  };
}

/** The ledger of `target`'s server, when the daemon keeps one. */
export function controlLedgerOf(target: TmuxTarget): ControlLedger | undefined {
  return ledgers.get(keyOf(target));
}

/** The pids tmux lists as control clients, or null when no server runs. */
async function controlClientPids(cli: TmuxCli): Promise<Set<number> | null> {
  try {
    const out = await cli.run(['list-clients', '-F', '#{client_control_mode} #{client_pid}']);
    const pids = out.stdout
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('1 '))
      .map((l) => Number(l.slice(2)));
    return new Set(pids);
  } catch {
    return null;
  }
}

/**
 * Whether `pid` may still be one of our control clients: alive, and (where /proc tells) a tmux
 * process in control mode. A pid reused by anything else is not waited for.
 */
function mayBeControlClient(pid: number): boolean {
  if (!processExists(pid)) return false;
  if (platform() !== 'linux') return true;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('-C') && argv.includes('attach-session');
  } catch {
    return false;
  }
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(ms: number, done: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= end) return false;
    await pause(POLL_MS);
  }
}

export interface RetireResult {
  /** Clients of the previous daemon that tmux still held and that were ended. */
  readonly ended: number;
  /** Clients that tmux still listed when the wait ran out. */
  readonly lingering: number;
}

/**
 * Ends the control clients the ledger's previous owner left on `target`'s server and waits
 * until tmux no longer lists them; then starts the ledger afresh for this daemon. Runs as a
 * writer of the topology gate, so none of this daemon's attaches is in its handshake meanwhile.
 */
export async function retireStaleControlClients(cli: TmuxCli, target: TmuxTarget, ledger: ControlLedger): Promise<RetireResult> {
  const recorded = ledger.recorded().filter((pid) => pid !== process.pid);
  if (recorded.length === 0) {
    ledger.reset();
    return { ended: 0, lingering: 0 };
  }
  const result = await topologyGate(target).write(async () => {
    // A client spawned just before its daemon died may not have reached tmux yet: give it a
    // moment to show up (or to end) rather than let it attach later, at a moment of its own.
    let listed = await controlClientPids(cli);
    if (listed === null) return { ended: 0, lingering: 0 };
    await until(CONNECT_WAIT_MS, async () => {
      listed = (await controlClientPids(cli)) ?? new Set();
      return recorded.every((pid) => listed!.has(pid) || !mayBeControlClient(pid));
    });
    const stale = recorded.filter((pid) => listed!.has(pid));
    for (const pid of stale) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    let still: number[] = stale;
    await until(RELEASE_WAIT_MS, async () => {
      const now = (await controlClientPids(cli)) ?? new Set<number>();
      still = stale.filter((pid) => now.has(pid));
      return still.length === 0;
    });
    return { ended: stale.length - still.length, lingering: still.length };
  });
  ledger.reset();
  return result;
}

/**
 * Ends the control clients a daemon that died (SIGKILL, a crash) left attached, before this
 * one attaches anything, and keeps this daemon's own in the ledger from now on
 * (this file's header says why tmux needs it). The result stops the keeping, at the stop.
 */
export async function retireStaleLinks(cli: TmuxCli, target: TmuxTarget, ledgerFile: string, log: Logger): Promise<() => void> {
  mkdirSync(dirname(ledgerFile), { recursive: true, mode: 0o700 });
  const ledger = new ControlLedger(ledgerFile);
  const { ended, lingering } = await retireStaleControlClients(cli, target, ledger);
  if (ended > 0) log.info({ ended }, 'ended the tmux control clients a previous daemon left attached');
  if (lingering > 0) log.warn({ lingering }, 'tmux still holds control clients a previous daemon left attached');
  return keepControlLedger(target, ledger);
}
