/**
 * Nobody gets in without a token, and nothing a client sends is ever run. Every route is taken
 * from the server's own route table (a route added later cannot be missed) and tried with no
 * token, a wrong one, a revoked one, and a good one in the wrong place: each is a 401 and
 * changes nothing. Frames and hostile text are fuzzed over a live socket; the logs are scanned
 * for secrets afterwards.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PairingStore } from '../../src/auth/pairing-store.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { eventually } from '../helpers/tmux.js';

const SESSION = 'sec';
const SINK_END = 'END-OF-FUZZ-7f3a';
const SINK = [
  "const fs = require('node:fs');",
  'const out = fs.openSync(process.argv[2], "w");',
  "let tail = '';",
  'process.stdin.setRawMode(true);',
  "process.stdout.write('sink-' + 'ready\\n');",
  "process.stdin.on('data', (d) => {",
  '  fs.writeSync(out, d);',
  "  tail = (tail + d.toString('latin1')).slice(-64);",
  `  if (tail.includes('${SINK_END}')) { process.stdin.setRawMode(false); process.exit(0); }`,
  '});',
].join('\n');

describe('security: tokens on every route, nothing run from client text, no secrets in logs', () => {
  const fx = useInProcessDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "${SESSION}"\n`);
  let base: string;
  let token: string;
  let revoked: string;
  let pairingToken: string;

  beforeAll(async () => {
    ({ base, token } = fx.d);
    const store = await TokenStore.open(join(fx.home.dataDir, 'auth'));
    revoked = store.create('soon-gone').token;
    store.revoke('soon-gone');
    store.close();
    pairingToken = new PairingStore(join(fx.home.dataDir, 'auth')).create().token;
  });

  const tmuxState = async () => ({
    sessions: (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}:#{session_windows}')).trim(),
    description: (await fx.tmux.tmux('show-options', '-v', '-q', '-t', SESSION, '@description')).trim(),
    files: readdirSync(fx.home.dir).sort(),
  });

  /** The ways a request can fail to carry a valid bearer token. */
  const BAD_AUTH: { name: string; headers: (t: string) => Record<string, string>; query?: (t: string) => string }[] = [
    { name: 'no token', headers: () => ({}) },
    { name: 'a wrong token', headers: () => ({ authorization: 'Bearer wrong-token-0000000000000000000000000000' }) },
    { name: 'a revoked token', headers: () => ({ authorization: `Bearer ${revoked}` }) },
    { name: 'a revoked token in the query', headers: () => ({}), query: () => `token=${encodeURIComponent(revoked)}` },
    { name: 'a pairing token as bearer', headers: () => ({ authorization: `Bearer ${pairingToken}` }) },
    { name: 'a pairing token in the query', headers: () => ({}), query: () => `token=${encodeURIComponent(pairingToken)}` },
    { name: 'the token as a cookie', headers: (t) => ({ cookie: `token=${t}` }) },
    { name: 'the token in another header', headers: (t) => ({ 'x-token': t }) },
    { name: 'the token under another scheme', headers: (t) => ({ authorization: `Basic ${Buffer.from(`u:${t}`).toString('base64')}` }) },
    { name: 'the token with no scheme', headers: (t) => ({ authorization: t }) },
    { name: 'the token in the wrong query key', headers: () => ({}), query: (t) => `access_token=${t}` },
  ];

  it('lists the routes it serves, and each one needs a token', () => {
    const urls = fx.d.routes.map((r) => `${r.method} ${r.url}`);
    for (const expected of [
      'GET /health',
      'GET /sessions',
      'POST /sessions',
      'GET /sessions/:id/stream',
      'GET /sessions/:id/side',
      'GET /ops',
      'GET /ops/events',
    ])
      expect(urls).toContain(expected);
    // Only routes that authenticate by other means may opt out, and they say so.
    for (const r of fx.d.routes.filter((x) => x.auth !== 'token')) expect(r.url).toBe('/pair');
  });

  it('answers 401 on every route, for every way of getting the token wrong, and changes nothing', async () => {
    const before = await tmuxState();
    const routes = fx.d.routes.filter((r) => r.auth === 'token' && r.method !== 'HEAD');
    expect(routes.length).toBeGreaterThan(6);
    for (const r of routes) {
      const path = r.url.replace(':id', SESSION);
      for (const bad of BAD_AUTH) {
        const q = bad.query ? `?${bad.query(token)}` : '';
        if (r.websocket) {
          const status = await new Promise<number | null>((resolve) => {
            const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${path}${q}`, { headers: bad.headers(token) });
            ws.on('unexpected-response', (_req, res) => {
              resolve(res.statusCode ?? null);
              ws.terminate();
            });
            ws.on('open', () => {
              resolve(101);
              ws.terminate();
            });
            ws.on('error', () => resolve(null));
          });
          expect({ route: `${r.method} ${r.url}`, bad: bad.name, status }).toEqual({
            route: `${r.method} ${r.url}`,
            bad: bad.name,
            status: 401,
          });
          continue;
        }
        const body =
          r.method === 'GET' || r.method === 'DELETE'
            ? undefined
            : JSON.stringify({ name: 'intruder', description: 'pwned', type: 'keys', data: 'touch pwned\r', token });
        const res = await fetch(`${base}${path}${q}`, {
          method: r.method,
          headers: { 'content-type': 'application/json', ...bad.headers(token) },
          body,
        });
        expect({ route: `${r.method} ${r.url}`, bad: bad.name, status: res.status }).toEqual({
          route: `${r.method} ${r.url}`,
          bad: bad.name,
          status: 401,
        });
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(await res.json()).toMatchObject({ error: 'unauthorized' });
      }
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await tmuxState()).toEqual(before);
  }, 120_000);

  it('takes any frame a fuzzer makes without running it or falling over', async () => {
    const before = await tmuxState();
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/sessions/${SESSION}/stream`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const errors: string[] = [];
    let closed: number | null = null;
    ws.on('message', (m, bin) => {
      if (bin) return;
      const f = JSON.parse((m as Buffer).toString('utf8')) as { type: string; code?: string };
      if (f.type === 'error') errors.push(f.code!);
    });
    ws.on('close', (code) => (closed = code));
    await new Promise((r) => ws.once('open', r));
    // The pane runs a sink that takes every byte raw (no line discipline: ^C, ^D, Enter are just
    // bytes) until a marker, so the fuzzer's input reaches a program and never a shell.
    const sink = join(fx.home.dir, 'sink.cjs');
    writeFileSync(sink, SINK);
    ws.send(JSON.stringify({ type: 'keys', data: `${process.execPath} ${sink} ${join(fx.home.dir, 'sink.out')}\r` }));
    await eventually(async () => (await fx.tmux.capture(`=${SESSION}:`)).includes('sink-ready'), 15_000);
    const known = '; kill-server #{pane_id} $(touch pwned) `touch pwned` ../../etc/passwd run-shell "touch pwned"';
    ws.send(JSON.stringify({ type: 'keys', data: known }));
    const hostile = fc.constantFrom(
      ';',
      '; kill-server',
      '#{pane_id}',
      '$(touch pwned)',
      '`touch pwned`',
      '../../etc/passwd',
      '\n',
      '\u0000',
      '\x1b]0;x\x07',
      '\ud800',
      'run-shell "touch pwned"',
    );
    const text = fc.oneof(hostile, fc.string(), fc.string({ unit: 'binary' }));
    const frame = fc.oneof(
      // Valid input, with hostile and random text: it must arrive as text, never be run.
      text.map((data) => JSON.stringify({ type: 'keys', data })),
      text.map((data) => JSON.stringify({ type: 'paste', data })),
      fc.oneof(hostile, fc.string({ maxLength: 32 })).map((name) => JSON.stringify({ type: 'key', name })),
      fc.constant(JSON.stringify({ type: 'snapshot-request' })),
      fc.oneof(fc.integer({ min: 0 }), fc.constant(null)).map((lastSeq) => JSON.stringify({ type: 'resume', lastSeq })),
      // Anything else.
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            type: fc.constantFrom('resume', 'key', 'keys', 'paste', 'snapshot-request', 'nope'),
            lastSeq: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
            name: fc.oneof(hostile, fc.string()),
            data: fc.oneof(hostile, fc.integer()),
          },
          { requiredKeys: ['type'] },
        )
        .map((v) => JSON.stringify(v)),
    );
    // Input that is valid is typed into the shell as text: shown, never run (no Enter is sent).
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 20 }), async (frames) => {
        for (const f of frames) ws.send(f);
        await new Promise((r) => setTimeout(r, 5));
        return closed === null;
      }),
      { numRuns: 60 },
    );
    for (let i = 0; i < 50; i++)
      ws.send(Buffer.from(Array.from({ length: 1 + (i % 64) }, () => Math.floor(Math.random() * 256))), { binary: true });
    await eventually(() => errors.length > 50, 15_000).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${errors.length} error frames, closed ${String(closed)}`);
    });
    expect(new Set(errors).size).toBeGreaterThan(0);
    expect([...new Set(errors)].every((c) => ['bad-frame', 'unknown-key', 'payload-too-large'].includes(c))).toBe(true);
    expect(closed).toBeNull();
    // End the sink; the shell still works, and nothing was run.
    ws.send(JSON.stringify({ type: 'keys', data: SINK_END }));
    // Wait for the sink to be gone before typing to the shell: else a slow sink reads the echo too.
    await eventually(
      async () => (await fx.tmux.tmux('display', '-p', '-t', `=${SESSION}:`, '#{pane_current_command}')).trim() !== 'node',
      15_000,
    );
    ws.send(JSON.stringify({ type: 'keys', data: 'echo fuzz-$((6*7))\r' }));
    await eventually(async () => (await fx.tmux.capture(`=${SESSION}:`)).includes('fuzz-42'), 15_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; the pane shows:\n${await fx.tmux.capture(`=${SESSION}:`)}`);
    });
    ws.close();
    expect(existsSync(join(fx.home.dir, 'pwned'))).toBe(false);
    const after = await tmuxState();
    expect(after.sessions).toBe(before.sessions);
    expect(after.files).toEqual([...before.files, 'sink.cjs', 'sink.out'].sort());
    // The hostile text arrived as the bytes it is.
    expect(readFileSync(join(fx.home.dir, 'sink.out'), 'utf8')).toContain(known);
  }, 120_000);

  it('never writes a token to its logs', async () => {
    // Requests that carry the token in the URL and the header, good and bad.
    await fetch(`${base}/health?token=${encodeURIComponent(token)}`);
    await fetch(`${base}/sessions`, { headers: { authorization: `Bearer ${token}` } });
    await fetch(`${base}/nope?token=${encodeURIComponent(revoked)}`);
    const file = join(fx.home.dataDir, 'tether.log');
    // The last request's line is written (the 404 of /nope): every earlier line is there too.
    const logs = await eventually(
      () => {
        const text = fx.d.stderr() + (existsSync(file) ? readFileSync(file, 'utf8') : '');
        return text.includes('/nope') && text;
      },
      15_000,
      25,
      'the log line of the last request (/nope)',
    );
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(revoked);
    expect(logs).toContain('[redacted]');
  });
});
