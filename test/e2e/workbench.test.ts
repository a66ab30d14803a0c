/**
 * The phone as a workbench, from a real client over HTTPS (the reference client, pinned to the
 * daemon's certificate): a file handed to the agent lands byte-identical at the path the
 * answer names (0600) and its path shows on the agent's input line; hostile names and bodies
 * past the limit are made safe or refused with nothing left behind; 200,000 lines come back in
 * pages, byte-identical to what a stream client received live; a search finds a line printed
 * before the daemon restarted.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/runtime/run-file.js';
import type { WorkbenchError } from '../../src/reference-client/index.js';
import { SessionStream, WorkbenchClient, pinnedTlsOptions, type PinnedTlsOptions } from '../../src/reference-client/index.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { eventually } from '../helpers/tmux.js';

const SESSION = 'wb-main';
const fx = useDaemon(`tls = true\n[agent]\ncommand = "/bin/sh"\ndefault_session = "${SESSION}"\n[uploads]\nmax_mb = 1\n`);

/** A PNG: the signature, an IHDR chunk and bytes that are not text. */
const PNG = Buffer.concat([
  Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'),
  Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) % 256)),
]);

let tls: PinnedTlsOptions;
let client: WorkbenchClient;
let uploadsDir: string;

/** The client of the daemon now running (a restart makes a new token-holding daemon). */
async function connect(): Promise<void> {
  const run = readRunFile(join(fx.home.dataDir, 'run'));
  if (!run?.fingerprint) throw new Error('the daemon wrote no run file with a fingerprint');
  tls = await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint);
  client = new WorkbenchClient({ baseUrl: fx.d.base, token: fx.d.token, tls });
}

/** Sends `text` as typed keys over the REST input route, pinned. */
async function type(text: string): Promise<void> {
  const body = Buffer.from(JSON.stringify({ type: 'keys', data: text }));
  const status = await new Promise<number>((resolve, reject) => {
    const r = request(
      `${fx.d.base}/sessions/${SESSION}/input`,
      { method: 'POST', ...tls, agent: false, headers: { authorization: `Bearer ${fx.d.token}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
  expect(status).toBe(204);
}

/** What the agent's pane shows, as an SSH user attached to it would see it. */
const paneText = () => fx.tmux.capture(`=${SESSION}:`);

beforeAll(async () => {
  await connect();
  uploadsDir = join(fx.home.dataDir, 'uploads', SESSION);
  await eventually(async () => /^[#$]( |$)/m.test(await paneText()), 15_000, 50, 'the shell prompt in the agent pane');
});

const filesLeft = (): string[] => {
  try {
    return readdirSync(uploadsDir).sort();
  } catch {
    return [];
  }
};

describe('uploads', () => {
  it('stores a PNG byte-identical at the returned path, 0600 in a 0700 folder, and types its path on the input line', async () => {
    const up = await client.upload(SESSION, 'screen shot.png', PNG, { insert: true, contentType: 'image/png' });
    expect(up.bytes).toBe(PNG.length);
    expect(up.name).toBe('screen-shot.png');
    expect(up.path).toBe(join(uploadsDir, 'screen-shot.png'));
    expect(readFileSync(up.path).equals(PNG)).toBe(true);
    expect(statSync(up.path).mode & 0o777).toBe(0o600);
    expect(statSync(uploadsDir).mode & 0o777).toBe(0o700);
    // On the prompt line, not run: no Enter was typed.
    const line = await eventually(
      async () => (await paneText()).split('\n').find((l) => l.includes(up.path)) ?? null,
      15_000,
      50,
      'the uploaded path on the shell prompt line',
    );
    expect(line!.trimEnd()).toMatch(new RegExp(`^[#$] ${up.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(await paneText()).not.toMatch(/Permission denied|not found|cannot execute/);
    await type('\u0015'); // Ctrl-U: the line is cleared for the next test.
  });

  it('a second upload of the same name keeps both, and a JSON body is stored as it is', async () => {
    const a = await client.upload(SESSION, 'notes.json', Buffer.from('{"a":1}'), { contentType: 'application/json' });
    const b = await client.upload(SESSION, 'notes.json', Buffer.from('{"b":2}'), { contentType: 'application/json' });
    expect([a.name, b.name]).toEqual(['notes.json', 'notes-1.json']);
    expect(readFileSync(a.path, 'utf8')).toBe('{"a":1}');
    expect(readFileSync(b.path, 'utf8')).toBe('{"b":2}');
  });

  it('hostile names are reduced to safe base names inside the uploads folder', async () => {
    const hostile = [
      '../../etc/passwd',
      'a;rm -rf ~.txt',
      '$(touch pwned).log',
      '#{session_name}.md',
      'line\nbreak.txt',
      'nul\u0000byte.bin',
    ];
    for (const name of hostile) {
      const up = await client.upload(SESSION, name, Buffer.from('x'));
      expect(up.path.startsWith(`${uploadsDir}/`)).toBe(true);
      expect(up.name).not.toMatch(/[/\\;$#\n]|\.\./);
      expect(up.name).not.toContain('\u0000');
      expect(readFileSync(up.path, 'utf8')).toBe('x');
    }
    expect(filesLeft()).toContain('passwd');
  });

  it('refuses what it cannot store, leaving nothing behind', async () => {
    const before = filesLeft();
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e as WorkbenchError,
      );
    // A name that reduces to nothing.
    expect(await refusal(client.upload(SESSION, '../..', Buffer.from('x')))).toMatchObject({ status: 400, code: 'bad-request' });
    // An unknown session, and a hostile session name.
    expect(await refusal(client.upload('no-such', 'a.txt', Buffer.from('x')))).toMatchObject({ status: 404 });
    expect(await refusal(client.upload('a;b', 'a.txt', Buffer.from('x')))).toMatchObject({ status: 400 });
    // Past max_mb (1 MiB), declared up front.
    const big = Buffer.alloc(1024 * 1024 + 1, 0x61);
    expect(await refusal(client.upload(SESSION, 'big.bin', big))).toMatchObject({ status: 413, code: 'payload-too-large' });
    // Past it without a declared length (chunked), and a client that stops halfway.
    expect(await chunkedUpload('chunked.bin', [Buffer.alloc(700_000), Buffer.alloc(700_000)])).toBe(413);
    await abortedUpload('halfway.bin');
    await eventually(() => filesLeft().join() === before.join(), 15_000, 50, 'no file left by the refused uploads');
  });

  it('removes a session’s uploads when the session is deleted', async () => {
    expect(await call('POST', '/sessions', { name: 'wb-gone' })).toBe(201);
    const up = await client.upload('wb-gone', 'a.txt', Buffer.from('x'));
    expect(readFileSync(up.path, 'utf8')).toBe('x');
    expect(await call('DELETE', '/sessions/wb-gone')).toBe(204);
    await eventually(
      () => !existsSync(join(fx.home.dataDir, 'uploads', 'wb-gone')),
      15_000,
      50,
      'the deleted session’s upload folder removed',
    );
  });

  it('needs the token', async () => {
    const anonymous = new WorkbenchClient({ baseUrl: fx.d.base, token: 'wrong', tls });
    await expect(anonymous.upload(SESSION, 'a.txt', Buffer.from('x'))).rejects.toMatchObject({ status: 401 });
    await expect(anonymous.history(SESSION, 0)).rejects.toMatchObject({ status: 401 });
    await expect(anonymous.search(SESSION, 'x')).rejects.toMatchObject({ status: 401 });
  });
});

/** An upload sent chunked (no Content-Length); resolves with the status. */
function chunkedUpload(name: string, parts: Buffer[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(
      `${fx.d.base}/sessions/${SESSION}/files?name=${name}`,
      {
        method: 'POST',
        ...tls,
        agent: false,
        headers: { authorization: `Bearer ${fx.d.token}`, 'content-type': 'application/octet-stream' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    r.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
    for (const p of parts) r.write(p);
    r.end();
  });
}

/** An upload that declares 500 KB, sends 100 KB and drops the connection. */
async function abortedUpload(name: string): Promise<void> {
  const r = request(`${fx.d.base}/sessions/${SESSION}/files?name=${name}`, {
    method: 'POST',
    ...tls,
    agent: false,
    headers: { authorization: `Bearer ${fx.d.token}`, 'content-type': 'application/octet-stream', 'content-length': '500000' },
  });
  r.on('error', () => undefined);
  r.write(Buffer.alloc(100_000));
  await eventually(() => filesLeft().includes('halfway.bin'), 15_000, 25, 'the half-sent upload being written');
  r.destroy();
}

describe('history and search', () => {
  it('reads 200,000 lines back in pages, byte-identical to what a live stream client received', async () => {
    const live: Buffer[] = [];
    let lastSeq = 0;
    const stream = new SessionStream({ baseUrl: fx.d.base, token: fx.d.token, session: SESSION, tls });
    let firstSeq: number | null = null;
    let screen = Buffer.alloc(0);
    // A snapshot starts what the client holds anew (a resync, should it fall behind).
    stream.on('snapshot', (bytes, seq) => {
      firstSeq = seq;
      lastSeq = seq;
      live.length = 0;
      screen = Buffer.from(bytes);
    });
    stream.on('data', (bytes, seq) => {
      live.push(Buffer.from(bytes));
      lastSeq = seq;
    });
    stream.connect();
    try {
      await eventually(() => firstSeq !== null, 15_000, 25, 'the stream client’s first snapshot');
      await type("seq 1 200000 | sed 's/$/ the quick brown fox jumps over the lazy dog/'; echo wb-flood-done\r");
      // The last line comes as data, or inside a resync's snapshot when the client fell behind
      // near the end of the flood; a line typed after it then comes as data either way.
      await eventually(
        () => Buffer.concat(live).includes('\nwb-flood-done') || screen.includes('wb-flood-done'),
        120_000,
        100,
        'the flood’s last line on the live stream',
      );
      await type('echo wb-after-$((6*7))\r');
      await eventually(() => Buffer.concat(live).includes('wb-after-42'), 30_000, 50, 'the line typed after the flood on the live stream');
      // What the live client holds now, and where it ends: the shell's prompt may still come after it.
      const got = Buffer.concat(live);
      const end = lastSeq;
      const pages: Buffer[] = [];
      let pageCount = 0;
      for await (const page of client.historyPages(SESSION, firstSeq!, end)) {
        pages.push(page.data);
        pageCount++;
        expect(page.data.length).toBeLessThanOrEqual(8 * 1024 * 1024);
      }
      const back = Buffer.concat(pages);
      expect(back.length).toBe(got.length);
      expect(back.equals(got)).toBe(true);
      // From position 0 to the same end: the whole buffer (the whole flood, over 8 MiB: several pages), the live
      // part at its end. (What the live client holds may start at a resync's snapshot on a busy
      // machine, and then fit in one page.)
      const all: Buffer[] = [];
      for await (const page of client.historyPages(SESSION, 0, end)) {
        all.push(page.data);
        expect(page.data.length).toBeLessThanOrEqual(8 * 1024 * 1024);
      }
      expect(all.length).toBeGreaterThan(1);
      expect(pageCount).toBeGreaterThanOrEqual(Math.ceil(got.length / (8 * 1024 * 1024)));
      const whole = Buffer.concat(all);
      expect(whole.includes('200000 the quick brown fox jumps over the lazy dog')).toBe(true);
      expect(whole.subarray(-got.length).equals(got)).toBe(true);
    } finally {
      stream.close();
    }
  }, 180_000);

  it('refuses bad positions, and answers 416 with the held range past the end', async () => {
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e as WorkbenchError,
      );
    const pastEnd = await refusal(client.history(SESSION, Number.MAX_SAFE_INTEGER - 10));
    expect(pastEnd).toMatchObject({ status: 416, code: 'range-not-held' });
    expect(pastEnd!.held.length).toBeGreaterThan(0);
    expect(await refusal(client.history(SESSION, 100, 50))).toMatchObject({ status: 400 });
    expect(await refusal(client.history('no-such', 0))).toMatchObject({ status: 404 });
    for (const bad of ['from=-1', 'from=1e3', 'from=abc', 'to=5', 'from=99999999999999999']) {
      const status = await rawStatus(`/sessions/${SESSION}/history?${bad}`);
      expect(status, bad).toBe(400);
    }
    for (const bad of ['q=', 'q=%20', 'q=x&limit=0', 'q=x&limit=501', 'q=x&limit=abc', 'limit=5', 'q=a%0Ab']) {
      const status = await rawStatus(`/sessions/${SESSION}/search?${bad}`);
      expect(status, bad).toBe(400);
    }
  });

  it('finds a line printed before the daemon restarted, newest first, with context and a position to read from', async () => {
    await type('printf "before-one\\n\\033[31mRestart\\033[0m-Marker red\\nafter-one\\n"\r');
    await eventually(async () => (await paneText()).includes('after-one'), 15_000, 50, 'the marker printed');
    await fx.d.stop();
    await fx.startAgain();
    await connect();
    await type('echo restart-marker again\r');
    await eventually(async () => (await paneText()).includes('restart-marker again\n'), 15_000, 50, 'the second marker printed');
    const found = await eventually(
      async () => {
        const r = await client.search(SESSION, 'RESTART-marker');
        return r.matches.length >= 3 ? r : null;
      },
      // Each search reads the session's whole buffer (the 200 000 lines above): seconds on a busy machine.
      60_000,
      100,
      'the markers found by a search',
    );
    // Newest first: the output after the restart, its typed command, then the red line from before it.
    expect(found!.matches[0]!.line).toBe('restart-marker again');
    const red = found!.matches.find((m) => m.line === 'Restart-Marker red')!;
    expect(red.before.at(-1)).toBe('before-one');
    expect(red.after[0]).toBe('after-one');
    const page = await client.history(SESSION, red.seq!);
    expect(page.data.toString('utf8').split('\n')[0]).toBe('\u001b[31mRestart\u001b[0m-Marker red\r');
    const limited = await client.search(SESSION, 'restart-marker', 1);
    expect(limited.matches).toHaveLength(1);
    expect(limited.complete).toBe(false);
  });
});

/** The status of an authenticated JSON request, pinned. */
function call(method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(
      `${fx.d.base}${path}`,
      {
        method,
        ...tls,
        agent: false,
        headers: { authorization: `Bearer ${fx.d.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    r.on('error', reject);
    r.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The status of an authenticated GET, pinned. */
function rawStatus(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(`${fx.d.base}${path}`, { ...tls, agent: false, headers: { authorization: `Bearer ${fx.d.token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    r.on('error', reject);
    r.end();
  });
}
