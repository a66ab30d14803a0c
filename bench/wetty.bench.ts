/**
 * wetty (npm `wetty`, a browser terminal over socket.io) beside tether: the same tmux server,
 * the same 120x40 pane (tether's client and wetty attached to one session), tether's own runs
 * alternating with wetty's in the same process.
 *
 * wetty runs `tmux -S <socket> attach -t <session>` in a pty of its own, so it forwards tmux's
 * redraw of the screen, not every byte of the pane: in a flood tmux skips frames for an attached
 * client that cannot keep up, which a control-mode client never gets. Its flood row therefore
 * says how soon the end of the flood reaches the screen, not how many bytes were carried.
 *
 * Installed from the registry into bench/peers/node_modules on first use (`npm ci` there, after
 * `apt-get install libpam0g-dev` when missing, for VibeTunnel); it
 * runs its command directly only as root on localhost (otherwise it logs in over ssh), so
 * elsewhere it is skipped with that reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEchoPane, tetherKeystroke } from './echo.bench.js';
import { freePort } from '../testkit/ports.js';
import { peerFloodRows } from './peer-flood.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, sleep, waitFor, type Row } from './figures.js';
import { peerEchoRows, peerReconnectRow } from './peer-rows.js';
import { streamWithBase } from './raw-stream.js';

/** The bench-only install of the peers (its own package.json and lock). */
const HERE = join(dirname(fileURLToPath(import.meta.url)), 'peers');

/** The socket.io client wetty's own page uses, from wetty's install. */
interface PeerSocket {
  on(event: string, fn: (arg: unknown) => void): void;
  once(event: string, fn: (arg: unknown) => void): void;
  off(event: string, fn?: (arg: unknown) => void): void;
  emit(event: string, arg?: unknown): void;
  disconnect(): void;
}
type Io = (url: string, opts: object) => PeerSocket;

/** Installs the peers (npm ci in bench/peers) once; null when ready, else why not. */
export function installPeers(): string | null {
  if (process.getuid?.() !== 0) return 'wetty runs its command directly only as root on localhost (elsewhere it logs in over ssh)';
  const ready = ['wetty/build/main.js', 'node-pty/build/Release/pty.node', 'vibetunnel/dist/vibetunnel-cli'].every((f) =>
    existsSync(join(HERE, 'node_modules', f)),
  );
  if (ready) return null;
  // VibeTunnel's PAM addon builds against Debian's libpam0g-dev: installed here when missing (root only).
  if (spawnSync('dpkg', ['-s', 'libpam0g-dev'], { stdio: 'ignore' }).status !== 0) {
    const apt = spawnSync('apt-get', ['install', '-y', 'libpam0g-dev'], {
      stdio: 'pipe',
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (apt.status !== 0) return `apt-get install libpam0g-dev failed: ${(apt.stderr || String(apt.error)).trim().split('\n').at(-1)}`;
  }
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'pipe', encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return `npm ci in bench/peers failed: ${(r.stderr || r.stdout || String(r.error)).trim().split('\n').at(-1)}`;
  return existsSync(join(HERE, 'node_modules/node-pty/build/Release/pty.node'))
    ? null
    : 'node-pty has no native build (its install script did not run)';
}

/** A wetty server whose every connection attaches to `session` on the bench's tmux. */
async function startWetty(bd: BenchDaemon, session: string): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(HERE, 'node_modules/wetty/build/main.js'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--command',
      `tmux -S ${bd.tmux.socket} attach -t ${session}`,
    ],
    {
      cwd: HERE,
      env: { ...process.env, TMUX: '' },
      stdio: 'ignore',
    },
  );
  await waitFor(
    'wetty listening',
    () =>
      new Promise<boolean>((resolve) => {
        const s = createServer();
        s.once('error', () => resolve(true));
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
      }),
    20_000,
    100,
  );
  return {
    port,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** One browser-like wetty client: it sizes the terminal and acknowledges data (wetty's flow control). */
function connect(
  io: Io,
  port: number,
): { socket: PeerSocket; startedAt: number; firstData: Promise<number>; onData: ((s: string) => void) | null } {
  const startedAt = performance.now();
  const socket = io(`http://127.0.0.1:${port}`, { path: '/socket.io', transports: ['websocket'], reconnection: false, forceNew: true });
  const client = { socket, startedAt, firstData: Promise.resolve(0), onData: null as ((s: string) => void) | null };
  client.firstData = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wetty sent nothing within 10 s on port ${port}`)), 10_000);
    socket.once('data', () => {
      clearTimeout(timer);
      resolve(performance.now());
    });
  });
  socket.on('login', () => socket.emit('resize', { cols: 120, rows: 40 }));
  socket.on('data', (d) => {
    const s = String(d);
    socket.emit('commit', s.length);
    client.onData?.(s);
  });
  return client;
}

async function wettyKeystroke(client: ReturnType<typeof connect>, key: string): Promise<number> {
  const t0 = performance.now();
  const seen = new Promise<void>((resolve) => (client.onData = (s) => s.includes(key) && resolve()));
  client.socket.emit('input', key);
  await Promise.race([seen, sleep(5000).then(() => Promise.reject(new Error(`wetty never echoed ${key}`)))]);
  client.onData = null;
  return performance.now() - t0;
}

const step = (what: string): void => void process.stderr.write(`[peers: ${what}]\n`);

export async function runWettyBench(): Promise<Row[]> {
  const refusal = installPeers();
  if (refusal) return [{ name: 'peer wetty', value: 'skipped', baseline: refusal, ratio: '-', target: '-' }];
  const io = (createRequire(join(HERE, 'package.json'))('socket.io-client') as { io: Io }).io;
  const keys = envNumber('TETHER_BENCH_ECHO_KEYS', 300);
  const reconnects = envNumber('TETHER_BENCH_RECONNECT_RUNS', 30);
  const floodMb = envNumber('TETHER_BENCH_PEER_FLOOD_MB', 100);
  return withBenchDaemon('peer', async (bd) => {
    await bd.tmux.tmux('set-option', '-t', 'peer', 'status', 'off');
    const wetty = await startWetty(bd, 'peer');
    const rows: Row[] = [];
    try {
      // Keystroke echo at an idle prompt: tether and wetty alternating in blocks, in the same pane.
      step('echo panes');
      await startEchoPane(bd, '=peer:');
      const tetherClient = await streamWithBase(bd, 'peer');
      step('tether client up; connecting wetty');
      const peer = connect(io, wetty.port);
      await peer.firstData;
      step('wetty up; keystrokes');
      await sleep(500);
      const echo = (key: string) => wettyKeystroke(peer, key);
      rows.push(...(await peerEchoRows('wetty', keys, (key) => tetherKeystroke(tetherClient, key), echo)));
      peer.socket.disconnect();
      await tetherClient.close();

      step('reconnects');
      // Reconnect: socket open to the screen on the client (tmux's redraw for a new attach).
      const baseline = 'a new tmux attach in a pty redraws the visible screen only (no history, no exact resume)';
      rows.push(
        await peerReconnectRow('wetty', 'a redrawn screen', baseline, reconnects, async () => {
          const c = connect(io, wetty.port);
          const took = (await c.firstData) - c.startedAt;
          c.socket.disconnect();
          return took;
        }),
      );

      step('flood');
      // Flood: how soon the end of a flood reaches the screen (tmux skips redraws for a slow attached client).
      // The echo program goes; a shell comes back in the same pane (wetty stays attached).
      await bd.tmux.tmux('respawn-pane', '-k', '-t', '=peer:', '/bin/sh');
      await sleep(500);
      const flood = connect(io, wetty.port);
      await flood.firstData;
      rows.push(...(await peerFloodRows(bd, 'wetty', floodMb, { listen: (fn) => (flood.onData = fn) })));
      flood.socket.disconnect();
    } finally {
      await wetty.stop();
    }
    return rows;
  });
}
