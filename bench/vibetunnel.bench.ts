/**
 * VibeTunnel (npm `vibetunnel`, its Node server without the Mac app) beside tether: the same tmux
 * server, the same 120x40 pane (tether's client and VibeTunnel's attached to one session), tether's
 * runs alternating with VibeTunnel's.
 *
 * VibeTunnel runs each session's command in a pty of its own and records the output as an
 * asciinema cast; a client reads it as server-sent events (`GET /api/sessions/<id>/stream`, each
 * event `[time, "o", text]`) and types with `POST /api/sessions/<id>/input {"text": ...}`. Its
 * session here runs `tmux -S <socket> attach -t <session>`, so like wetty it carries tmux's redraw
 * of the screen, not every byte of the pane. Its reconnect replays the cast from the last clear.
 *
 * Installed with wetty into bench/peers (npm ci there; needs Debian libpam0g-dev for its PAM
 * addon); when it cannot be installed or started the row says why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEchoPane, tetherKeystroke } from './echo.bench.js';
import { withBenchDaemon } from './harness.js';
import { envNumber, sleep, waitFor, type Row } from './figures.js';
import { peerEchoRows, peerReconnectRow } from './peer-rows.js';
import { streamWithBase } from './raw-stream.js';
import { peerFloodRows } from './peer-flood.js';
import { freePort } from '../testkit/ports.js';
import { installPeers } from './wetty.bench.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'peers');
// Its bin script only requires this file, whose start-up then does nothing (it checks it is the main module).
const MAIN = join(HERE, 'node_modules/vibetunnel/dist/vibetunnel-cli');
const step = (what: string): void => void process.stderr.write(`[peers: vibetunnel ${what}]\n`);

/** One SSE reader of a session's stream: output text as it comes, and when the first output came. */
class CastStream {
  readonly startedAt = performance.now();
  firstOutput: Promise<number>;
  onText: ((s: string) => void) | null = null;
  bytes = 0;
  private res: IncomingMessage | null = null;
  private readonly req;
  private pending = '';

  constructor(port: number, id: string) {
    let first: (t: number) => void = () => undefined;
    let fail: (e: Error) => void = () => undefined;
    this.firstOutput = new Promise<number>((resolve, reject) => {
      first = resolve;
      fail = reject;
    });
    const timer = setTimeout(() => fail(new Error('vibetunnel sent no output within 10 s')), 10_000);
    this.req = request({ host: '127.0.0.1', port, path: `/api/sessions/${id}/stream`, headers: { accept: 'text/event-stream' } }, (res) => {
      this.res = res;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        this.pending += chunk;
        let cut: number;
        while ((cut = this.pending.indexOf('\n\n')) >= 0) {
          const event = this.pending.slice(0, cut);
          this.pending = this.pending.slice(cut + 2);
          if (!event.startsWith('data: ')) continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(event.slice(6));
          } catch {
            continue;
          }
          if (Array.isArray(parsed) && parsed[1] === 'o' && typeof parsed[2] === 'string') {
            clearTimeout(timer);
            first(performance.now());
            this.bytes += parsed[2].length;
            this.onText?.(parsed[2]);
          }
        }
      });
    });
    this.req.on('error', (e) => fail(e));
    this.req.end();
  }

  close(): void {
    this.res?.destroy();
    this.req.destroy();
  }
}

async function api(port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`vibetunnel ${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

async function keystroke(port: number, id: string, s: CastStream, key: string): Promise<number> {
  const t0 = performance.now();
  const seen = new Promise<void>((resolve) => (s.onText = (t) => t.includes(key) && resolve()));
  await api(port, 'POST', `/api/sessions/${id}/input`, { text: key });
  await Promise.race([seen, sleep(5000).then(() => Promise.reject(new Error(`vibetunnel never echoed ${key}`)))]);
  s.onText = null;
  return performance.now() - t0;
}

export async function runVibeTunnelBench(): Promise<Row[]> {
  const refusal = installPeers();
  if (refusal) return [{ name: 'peer VibeTunnel', value: 'skipped', baseline: refusal, ratio: '-', target: '-' }];
  if (!existsSync(MAIN))
    return [{ name: 'peer VibeTunnel', value: 'skipped', baseline: 'bench/peers has no vibetunnel install', ratio: '-', target: '-' }];
  const keys = envNumber('TETHER_BENCH_ECHO_KEYS', 300);
  const reconnects = envNumber('TETHER_BENCH_RECONNECT_RUNS', 30);
  const floodMb = envNumber('TETHER_BENCH_PEER_FLOOD_MB', 100);
  return withBenchDaemon('peer', async (bd) => {
    await bd.tmux.tmux('set-option', '-t', 'peer', 'status', 'off');
    const port = await freePort();
    const home = mkdtempSync(join(tmpdir(), 'tether-bench-vt-'));
    let child: ChildProcess | null = null;
    const rows: Row[] = [];
    try {
      child = spawn(process.execPath, [MAIN, '--port', String(port), '--bind', '127.0.0.1', '--no-auth'], {
        cwd: HERE,
        env: { ...process.env, TMUX: '', HOME: home },
        stdio: 'ignore',
      });
      await waitFor(
        'vibetunnel answering',
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/api/sessions`)).ok;
          } catch {
            return false;
          }
        },
        30_000,
        200,
      );
      const created = (await api(port, 'POST', '/api/sessions', {
        command: ['tmux', '-S', bd.tmux.socket, 'attach', '-t', 'peer'],
        workingDir: bd.tmux.dir,
        name: 'peer',
        cols: 120,
        rows: 40,
      })) as { sessionId?: string };
      const id = created.sessionId;
      if (!id) throw new Error(`vibetunnel created no session: ${JSON.stringify(created)}`);

      step('echo');
      await startEchoPane(bd, '=peer:');
      const tetherClient = await streamWithBase(bd, 'peer');
      const s = new CastStream(port, id);
      await s.firstOutput;
      await sleep(500);
      const echo = (key: string) => keystroke(port, id, s, key);
      rows.push(...(await peerEchoRows('VibeTunnel', keys, (key) => tetherKeystroke(tetherClient, key), echo)));
      s.close();
      await tetherClient.close();

      step('reconnects');
      const baseline = 'stream open to the first replayed output event (the cast since the last clear)';
      rows.push(
        await peerReconnectRow('VibeTunnel', 'output', baseline, reconnects, async () => {
          const c = new CastStream(port, id);
          const took = (await c.firstOutput) - c.startedAt;
          c.close();
          return took;
        }),
      );

      step('flood');
      await bd.tmux.tmux('respawn-pane', '-k', '-t', '=peer:', '/bin/sh');
      await sleep(500);
      const flood = new CastStream(port, id);
      await flood.firstOutput;
      await sleep(500);
      rows.push(...(await peerFloodRows(bd, 'VibeTunnel', floodMb, { listen: (fn) => (flood.onText = fn) })));
      flood.close();
      await api(port, 'DELETE', `/api/sessions/${id}`).catch(() => undefined);
    } catch (e) {
      rows.push({ name: 'peer VibeTunnel', value: 'failed', baseline: (e as Error).message, ratio: '-', target: '-' });
    } finally {
      if (child && child.exitCode === null) {
        const c = child;
        await new Promise<void>((resolve) => {
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
          setTimeout(() => {
            c.kill('SIGKILL');
            resolve();
          }, 5000).unref();
        });
      }
      rmSync(home, { recursive: true, force: true });
    }
    return rows;
  });
}
