/**
 * What a new session costs in tmux processes (real daemon, real tmux): each process the daemon
 * starts is a fork that holds its event loop for a few milliseconds, and a hundred sessions made
 * or restored at once made 907 of them in 16 s (docs/benchmarks.md "Fewer tmux processes a
 * session"). A session costs its `new-session` and its control client; the listings that follow
 * (discovery, the record keeper, a phone's `session-meta`) go over the control clients already
 * there, and the options tether set when it made the session are held, never read back. The
 * daemon's `tmux` here is a wrapper on PATH that writes each invocation's argv to a log before it
 * runs the real one.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SessionRecords } from '../../src/restore/records.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

/** Sessions made back to back, each with a phone that joins it at once. */
const SESSIONS = ['made-1', 'made-2', 'made-3', 'made-4', 'made-5'];
/** The discovery's periodic scan (src/actors/discovery.actor.ts RESCAN_LINKED_MS) reads every description with one process. */
const PERIODIC_SCAN_MS = 10_000;

const realTmux = execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim();
const binDir = mkdtempSync(join(tmpdir(), 'tether-tmux-calls-'));
const callLog = join(binDir, 'calls.log');
// One line per invocation (its argv, newlines folded), appended before the real tmux runs.
writeFileSync(
  join(binDir, 'tmux'),
  `#!/bin/sh\nline=$(printf '%s' "$*" | tr '\\n' ' ')\nprintf '%s\\n' "$line" >> '${callLog}'\nexec '${realTmux}' "$@"\n`,
);
chmodSync(join(binDir, 'tmux'), 0o755);
writeFileSync(callLog, '');

const calls = (): string[] => readFileSync(callLog, 'utf8').split('\n').slice(0, -1);

describe('tmux processes of new sessions', () => {
  const fx = useDaemon(`[agent]\ncommand = "/bin/cat"\n`, {
    extraEnv: { PATH: `${binDir}:${process.env.PATH ?? ''}` },
    after: () => rmSync(binDir, { recursive: true, force: true }),
  });

  it(
    'a session made while others run costs its new-session and its control client, and nothing it set is read back',
    { timeout: 120_000 },
    async () => {
      const records = new SessionRecords(fx.home.dataDir);
      // A first session, so that a control client is linked before the burst (as in a running daemon).
      expect((await fx.json('POST', '/sessions', { name: 'first' })).status).toBe(201);
      await eventually(() => records.read('first') !== null, 30_000, 50, "the first session's record");
      await quiet(2_000, 'the daemon to stop calling tmux after the first session');

      const from = calls().length;
      const began = Date.now();
      const phones: Mirror[] = [];
      for (const name of SESSIONS) {
        const res = await fx.json('POST', '/sessions', { name });
        expect(res.status, await res.text()).toBe(201);
        phones.push(fx.mirror(name));
      }
      for (const [i, name] of SESSIONS.entries()) {
        await eventually(() => records.read(name) !== null, 30_000, 50, `the record of ${name}`);
        await eventually(
          () => phones[i]!.received.some((r) => r.kind === 'meta' && r.frame.name === name),
          30_000,
          50,
          `${name}'s session-meta`,
        );
      }
      // The list shows them all.
      const listed = JSON.stringify(await (await fx.json('GET', '/sessions')).json());
      for (const name of SESSIONS) expect(listed).toContain(`"${name}"`);
      await quiet(2_000, 'the daemon to stop calling tmux after the burst');
      const window = Date.now() - began;

      const made = calls().slice(from);
      const named = (command: string) => made.filter((c) => new RegExp(`(^| )${command}( |$)`).test(c.split(' ; ')[0] ?? ''));
      expect(named('new-session'), made.join('\n')).toHaveLength(SESSIONS.length);
      expect(named('attach-session'), made.join('\n')).toHaveLength(SESSIONS.length);
      // The listings ran over the control clients, and the record keeper asked no `display-message`.
      expect(named('list-panes'), made.join('\n')).toEqual([]);
      expect(named('display-message'), made.join('\n')).toEqual([]);
      // The options tether set are held, never read back; what is left is the periodic scan's
      // read of the descriptions (one process a scan in the window).
      const periodic = Math.floor(window / PERIODIC_SCAN_MS) + 1;
      expect(made.length, made.join('\n')).toBeLessThanOrEqual(2 * SESSIONS.length + periodic);
    },
  );

  /** Waits until the log has had no new call for `ms`. */
  async function quiet(ms: number, what: string): Promise<void> {
    let seen = -1;
    let since = Date.now();
    await eventually(
      () => {
        const n = calls().length;
        if (n !== seen) [seen, since] = [n, Date.now()];
        return Date.now() - since >= ms;
      },
      60_000,
      100,
      what,
    );
  }
});
