/**
 * `tether auth revoke` holds the moment it returns. The real daemon serves a stream to a token;
 * the real CLI revokes it; right after the CLI process exits, before the test asks the daemon
 * anything, the stream has already been told to close (4401), and the token is refused over
 * HTTP (401) and for a new WebSocket (401 before any upgrade). While the command runs, the
 * token is used without pause: no request sent after the file was written gets in. Done several
 * times in a row, so a daemon that only noticed the change on a timer could not pass.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const ROUNDS = 5;
const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;

/** A stream socket with a token; resolves once the server sent its first frame. */
async function openStream(base: string, token: string): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/sessions/pi-main/stream`, { headers: { authorization: `Bearer ${token}` } });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('message', resolve);
    ws.once('error', reject);
  });
  return { ws, closed };
}

/** The HTTP status a WebSocket upgrade with `token` gets: 101 when it opens. */
function upgradeStatus(base: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/sessions/pi-main/stream`, { headers: { authorization: `Bearer ${token}` } });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      resolve(101);
      ws.terminate();
    });
    ws.once('error', (err) => (err.message.includes('Unexpected server response') ? undefined : reject(err)));
  });
}

/**
 * Uses the token over HTTP again and again until `done` settles; counts the requests that were
 * sent after the tokens file had lost the token's record (read by the test before sending: the
 * daemon rewrites the file too, with last-used times) and still got in. A daemon that looks at
 * the file on every authentication never lets one through; one that notices on a timer does,
 * for as long as its timer has not fired.
 */
async function probeWhile(done: Promise<unknown>, base: string, token: string, file: string, name: string) {
  // The file is replaced atomically (rename), so a read sees one version or the next, whole.
  const stored = () => (JSON.parse(readFileSync(file, 'utf8')) as { tokens: { name: string }[] }).tokens.some((t) => t.name === name);
  let finished = false;
  void done.finally(() => (finished = true));
  const counts = { sent: 0, afterWrite: 0, leaked: [] as number[] };
  while (!finished) {
    const revoked = !stored();
    const status = (await fetch(`${base}/sessions`, { headers: { authorization: `Bearer ${token}` } })).status;
    counts.sent++;
    if (revoked) counts.afterWrite++;
    if (revoked && status !== 401) counts.leaked.push(status);
    // Paced, not a wait: the command must get the CPU to finish on a busy machine.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return counts;
}

/** One turn of the event loop: data already waiting on a socket has been read after it. */
const loopTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('tether auth revoke holds when it returns', () => {
  const fx = useDaemon(AGENT);

  it(`refuses the token and has closed its stream by the time the command exits (${ROUNDS} rounds)`, async () => {
    const cli = (...args: string[]) => runCli(['auth', ...args], fx.home.env, 90_000);
    let afterWrite = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const name = `phone-${round}`;
      const created = await cli('create', name);
      expect(created.code, created.stderr).toBe(0);
      const token = created.stdout.trim();
      const { ws, closed } = await openStream(fx.d.base, token);
      // The token works, and the daemon has just looked at the store (a timer-based daemon
      // would not look again for a while).
      const before = await fetch(`${fx.d.base}/sessions`, { headers: { authorization: `Bearer ${token}` } });
      expect(before.status, `round ${round}: the token works before the revocation`).toBe(200);

      const revoking = cli('revoke', name);
      const probe = await probeWhile(revoking, fx.d.base, token, join(fx.home.dataDir, 'auth', 'tokens.json'), name);
      const revoked = await revoking;
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(
        probe.leaked,
        `round ${round}: the answers to requests sent after the revocation was written (of ${probe.afterWrite})`,
      ).toEqual([]);
      afterWrite += probe.afterWrite;
      expect(revoked.stdout).toContain(`revoked ${name}`);
      expect(revoked.stderr, 'the daemon answered the notice').toBe('');

      // Nothing asked of the daemon yet: the close frame it sent before answering the CLI is here.
      await loopTurn();
      await loopTurn();
      expect(ws.readyState, `round ${round}: the open stream was told to close before the command returned`).not.toBe(WebSocket.OPEN);
      const http = await fetch(`${fx.d.base}/sessions`, { headers: { authorization: `Bearer ${token}` } });
      expect(http.status, `round ${round}: HTTP right after the command`).toBe(401);
      expect(await upgradeStatus(fx.d.base, token), `round ${round}: a WebSocket right after the command`).toBe(401);
      const query = await fetch(`${fx.d.base}/sessions?token=${encodeURIComponent(token)}`);
      expect(query.status, `round ${round}: ?token= right after the command`).toBe(401);
      expect(await closed, `round ${round}: the stream's close code`).toBe(4401);
    }
    // The probes did reach the window between the write and the command's exit.
    expect(afterWrite, 'requests sent between a revocation being written and the command exiting').toBeGreaterThan(0);
    // The daemon's own token still works: only the revoked ones are refused.
    expect((await fx.d.get('/sessions')).status).toBe(200);
  }, 400_000);

  it('revoking the local token (the one the CLI tells the daemon with) holds at once too', async () => {
    const { ws, closed } = await openStream(fx.d.base, fx.d.token);
    const revoked = await runCli(['auth', 'revoke', 'local'], fx.home.env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toBe('');
    await loopTurn();
    await loopTurn();
    expect(ws.readyState, 'the stream was told to close before the command returned').not.toBe(WebSocket.OPEN);
    expect((await fx.d.get('/sessions')).status).toBe(401);
    expect(await upgradeStatus(fx.d.base, fx.d.token)).toBe(401);
    expect(await closed).toBe(4401);
  }, 60_000);
});
