/**
 * tether's built Claude Code statusLine program run as Claude runs it (docs/agents.md "Usage"):
 * `node dist/agent/claude/statusline.js`, the status JSON on stdin, in a pane's environment,
 * against a stand-in for the daemon's agent socket. It reports the usage windows and runs the
 * user's own statusLine in its place with the same stdin bytes, their output, errors and exit
 * status passed through untouched; a user without one gets an SGR reset and nothing else; a
 * silent daemon costs at most about a second; a signal that ends it ends the user's command.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.js';
import { eventually } from '../helpers/tmux.js';

const PROGRAM = join(ROOT, 'dist/agent/claude/statusline.js');
const root = mkdtempSync(join(tmpdir(), 'tether-statusline-'));
const home = join(root, 'home');
const project = join(root, 'project');
const socketPath = join(root, 'agent.sock');
mkdirSync(join(home, '.claude'), { recursive: true });
mkdirSync(join(project, '.claude'), { recursive: true });

/** A statusLine input after an answer at 42 % / 17 %, as Claude Code 2.1.328 writes it (shortened). */
const INPUT = `${JSON.stringify({
  session_id: '2897c28a-efd0-4757-8ce7-0c553e09ab29',
  cwd: project,
  model: { id: 'claude-sonnet-5-5', display_name: 'Sonnet 5.5' },
  workspace: { current_dir: project, project_dir: project, added_dirs: [] },
  rate_limits: { five_hour: { used_percentage: 42, resets_at: 1796428898 }, seven_day: { used_percentage: 17, resets_at: 1796857298 } },
})}\n`;
const START_UP = `${JSON.stringify({ session_id: 's', cwd: project, workspace: { project_dir: project } })}\n`;
const PANE_ENV = {
  HOME: home,
  PATH: process.env.PATH,
  TMUX: '/tmp/tmux-test/default,1,0',
  TMUX_PANE: '%7',
  TETHER_AGENT_SOCKET: socketPath,
};

/** The daemon's stand-in: the lines it got; it answers `ok` unless `silent`. */
let lines: string[] = [];
let silent = false;
let server: Server;
beforeAll(
  () =>
    new Promise<void>((resolve) => {
      server = createServer((s) => {
        s.on('data', (d: Buffer) => {
          lines.push(...String(d).split('\n').filter(Boolean));
          if (!silent) s.end('{"type":"ok"}\n');
        });
        s.on('error', () => undefined);
      }).listen(socketPath, resolve);
    }),
);
afterAll(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => {
  lines = [];
  silent = false;
  for (const f of [join(home, '.claude', 'settings.json'), join(project, '.claude', 'settings.local.json')]) rmSync(f, { force: true });
});

interface Run {
  readonly stdout: Buffer;
  readonly stderr: string;
  readonly status: number | null;
  readonly ms: number;
}

/** Runs the program in `project` with `input` on stdin, as Claude does. */
function run(input: string, env: NodeJS.ProcessEnv = PANE_ENV): Promise<Run> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [PROGRAM], { cwd: project, env, stdio: 'pipe' });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
  child.stdin.end(input);
  return new Promise((resolve) =>
    child.on('close', (status) => resolve({ stdout: Buffer.concat(out), stderr, status, ms: Date.now() - t0 })),
  );
}

const userLine = (file: string, command: string): void =>
  writeFileSync(file, JSON.stringify({ statusLine: { type: 'command', command, padding: 2 } }));
const reports = () => lines.map((l) => JSON.parse(l) as { type: string; agent: string; pane: string; fields: Record<string, string> });

describe("tether's statusLine program", () => {
  it('without a statusLine of the user: prints only an SGR reset, exits 0, and reports the windows', async () => {
    const r = await run(INPUT);
    expect(r.stdout.toString('binary')).toBe('\u001b[0m');
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(reports()).toEqual([
      expect.objectContaining({
        type: 'hook',
        agent: 'claude',
        pane: '%7',
        tmuxSocket: '/tmp/tmux-test/default',
        server: 1,
        fields: {
          hook_event_name: 'StatusLine',
          session_id: '2897c28a-efd0-4757-8ce7-0c553e09ab29',
          cwd: project,
          five_hour_used: '42',
          five_hour_resets: '1796428898',
          seven_day_used: '17',
          seven_day_resets: '1796857298',
        },
      }),
    ]);
  });

  it("runs the user's own through sh with the same stdin bytes; its output, errors and status are Claude's, byte for byte", async () => {
    const got = join(root, 'got-stdin');
    userLine(
      join(home, '.claude', 'settings.json'),
      `cat > '${got}'; printf '\\033[1mbold\\033[0m  \\n\\n\\342\\234\\223 second\\n'; echo oops >&2; exit 3`,
    );
    const r = await run(INPUT);
    expect(r.stdout).toEqual(Buffer.from('\u001b[1mbold\u001b[0m  \n\n\u2713 second\n'));
    expect([r.status, r.stderr]).toEqual([3, 'oops\n']);
    expect(readFileSync(got, 'utf8')).toBe(INPUT);
    expect(reports().map((x) => x.fields.five_hour_used)).toEqual(['42']);
  });

  it("takes the project's local statusLine over the user's, the project named by the input", async () => {
    userLine(join(home, '.claude', 'settings.json'), 'echo user');
    userLine(join(project, '.claude', 'settings.local.json'), 'echo "local in $(pwd)"');
    expect((await run(INPUT)).stdout.toString()).toBe(`local in ${project}\n`);
  });

  it("at start-up (no windows): no report, no connection; it still runs the user's", async () => {
    userLine(join(home, '.claude', 'settings.json'), 'cat >/dev/null; echo first');
    const r = await run(START_UP);
    expect([r.stdout.toString(), r.status]).toEqual(['first\n', 0]);
    expect(lines).toEqual([]);
  });

  it('outside a pane or without a daemon: the same output, at once', async () => {
    const { TMUX_PANE: _pane, ...noPane } = PANE_ENV;
    const r = await run(INPUT, noPane);
    expect([r.stdout.toString('binary'), r.status]).toEqual(['\u001b[0m', 0]);
    const gone = await run(INPUT, { ...PANE_ENV, TETHER_AGENT_SOCKET: join(root, 'none.sock') });
    expect([gone.stdout.toString('binary'), gone.status]).toEqual(['\u001b[0m', 0]);
    expect(lines).toEqual([]);
  });

  it('a daemon that never answers costs about a second, not more', async () => {
    silent = true;
    userLine(join(home, '.claude', 'settings.json'), 'echo mine');
    const r = await run(INPUT);
    expect([r.stdout.toString(), r.status]).toEqual(['mine\n', 0]);
    expect(lines).toHaveLength(1);
    expect(r.ms).toBeGreaterThanOrEqual(900);
    expect(r.ms).toBeLessThan(2500);
  });

  it('a user command slower than the report is waited for, as Claude would', async () => {
    userLine(join(home, '.claude', 'settings.json'), 'sleep 1.5; echo slow');
    const r = await run(INPUT);
    expect([r.stdout.toString(), r.status]).toEqual(['slow\n', 0]);
    expect(r.ms).toBeGreaterThanOrEqual(1500);
  });

  it("a signal that ends it (Claude dropping a run) ends the user's command too", async () => {
    const pidFile = join(root, 'user.pid');
    userLine(join(home, '.claude', 'settings.json'), `echo $$ > '${pidFile}'; exec sleep 30`);
    const child = spawn(process.execPath, [PROGRAM], { cwd: project, env: PANE_ENV, stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin.end(INPUT);
    const pid = await eventually(() => {
      try {
        return Number(readFileSync(pidFile, 'utf8'));
      } catch {
        return 0;
      }
    }, 10_000);
    const closed = new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
    child.kill('SIGTERM');
    expect(await closed).toBe(143);
    await eventually(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      5000,
      25,
      "the user's command ended",
    );
  });
});
