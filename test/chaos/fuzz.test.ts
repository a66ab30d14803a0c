/**
 * Hostile input, always: a fuzzer over everything a peer can send, before and after the token,
 * against a daemon serving TLS as it does by default (testkit/fuzz: every route of the server's
 * own table with bodies and queries from its schemas, sessions with worktrees of a repository
 * of its own and diffs of its files, HTTP framing spoiled byte by byte, WebSocket handshakes and
 * frames, pairing, bytes that are not the protocol). A fixed seed and a few hundred cases here;
 * `npm run bench -- fuzz` runs a long one with a random seed (docs/benchmarks.md "Fuzzing").
 *
 * Nothing crashes, every refusal is a status or close code docs/api.md gives, and no input ever
 * reaches tmux or a shell: canaries that would leave a file if anything ran them leave none,
 * tmux holds exactly the sessions the daemon said it made, the repository keeps its branches and
 * worktrees, and the panes' programs read exactly the input the daemon took, and none it refused.
 *
 * A failure prints the seed, the path and the shrunk case; run it again with
 * TETHER_FUZZ_SEED=<seed> TETHER_FUZZ_PATH=<path> and `-t '<surface>'` (docs/testing.md
 * "Replaying a failing seed").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_STATUSES, routeKey } from '../../testkit/fuzz/oracle.js';
import { runPairCase } from '../../testkit/fuzz/pairing.js';
import { exchange } from '../../testkit/fuzz/raw-http.js';
import { upgradeHeaders, upgradeRequest } from '../../testkit/fuzz/raw-ws.js';
import { api, runRequestCase } from '../../testkit/fuzz/requests.js';
import { expectHealthy, FuzzLedger, fuzzSurface, verifyLedger, type FuzzTarget, type SurfaceName } from '../../testkit/fuzz/run.js';
import { FUZZ_GIT_SESSION, FUZZ_SESSION, fuzzProbes, fuzzTarget, fuzzWorld, worldReady, type FuzzWorld } from '../../testkit/fuzz/world.js';
import { useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { makeCertificate } from '../helpers/in-process-daemon.js';
import { eventually } from '../helpers/tmux.js';

const SEED = Number(process.env.TETHER_FUZZ_SEED ?? 20_261_126);
const PATH = process.env.TETHER_FUZZ_PATH;
/** Cases per surface: a few seconds in all on a quiet machine. */
const RUNS: readonly { surface: SurfaceName; runs: number }[] = [
  { surface: 'requests', runs: 250 },
  { surface: 'raw-http', runs: 150 },
  { surface: 'upgrades', runs: 120 },
  { surface: 'frames', runs: 60 },
  { surface: 'pairing', runs: 40 },
  { surface: 'noise', runs: 30 },
];
/** One exchange's bound: generous, a busy machine is slow; a daemon that hangs still fails. */
const EXCHANGE_MS = 20_000;

/** A WebSocket handshake to `path` with the token, by hand. */
const upgrade = (path: string, token: string, host: string): string =>
  upgradeRequest(path, [...upgradeHeaders(host), ['Authorization', `Bearer ${token}`]]).toString('latin1');

describe('fuzz: everything a peer can send, before and after the token', () => {
  // Made when the fixture starts (not when the file is collected), removed after the daemon.
  let world: FuzzWorld;
  const fx = useInProcessDaemon(() => world.toml, {
    before: () => void (world = fuzzWorld()),
    prepare: ({ home }) => makeCertificate(home),
    after: () => world.cleanup(),
  });
  const ledger = new FuzzLedger();
  let t: FuzzTarget;
  let detach = () => undefined as void;
  const tmux = (...args: string[]) => fx.tmux.tmux(...args);
  const wait = (fn: () => boolean | Promise<boolean>, what: string) => eventually(fn, 30_000, 50, what).then(() => undefined);

  beforeAll(async () => {
    ({ target: t, detach } = await fuzzTarget(world, {
      base: fx.d.base,
      token: fx.d.token,
      routes: fx.d.routes,
      dataDir: fx.home.dataDir,
      log: () => fx.d.stderr(),
    }));
    await worldReady(t, tmux, wait, EXCHANGE_MS);
  }, 60_000);
  afterAll(() => detach());

  it("fuzzes every route of the server's table, each with the statuses docs/api.md gives it", () => {
    const keys = fx.d.routes.filter((r) => r.method !== 'HEAD').map((r) => routeKey(r.method, r.url));
    expect(keys.filter((k) => !(k in DOCUMENTED_STATUSES))).toEqual([]);
    expect(fx.d.routes.filter((r) => r.method === 'POST' && r.url === '/sessions')[0]?.schema.body).toBeDefined();
  });

  /** What the fuzzer found answered outside the one error shape, or not as docs/api.md says: each fixed, each kept here. */
  const FOUND: { what: string; request: (token: string, host: string) => string; status: number; error: string | null }[] = [
    { what: 'bytes that are not HTTP', request: () => 'HELLO\r\n\r\n', status: 400, error: 'bad-request' },
    {
      what: 'a header folded over two lines',
      request: (_t, h) => `GET /health HTTP/1.1\r\nHost: ${h}\r\nX-A: a\r\n b\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'headers over 16 KiB',
      request: (_t, h) => `GET /health HTTP/1.1\r\nHost: ${h}\r\nX-A: ${'a'.repeat(17_000)}\r\n\r\n`,
      status: 431,
      error: 'headers-too-large',
    },
    {
      what: 'a path part over 100 characters (was a 414)',
      request: (t, h) => `GET /sessions/${'%3B'.repeat(120)}/thumbnail HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'a broken percent-encoding',
      request: (t, h) => `GET /sessions/%ZZ/thumbnail HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'an HTTP/1.1 request without Host (was an empty 400)',
      request: (t) => `GET /health HTTP/1.1\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'an unknown Expect, without the token (was an empty 417)',
      request: (_t, h) => `GET /health HTTP/1.1\r\nHost: ${h}\r\nExpect: 200-ok\r\n\r\n`,
      status: 401,
      error: 'unauthorized',
    },
    {
      what: 'an unknown Expect, with the token (was an empty 417)',
      request: (t, h) => `GET /health HTTP/1.1\r\nHost: ${h}\r\nExpect: 200-ok\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 200,
      error: null,
    },
    {
      what: 'a plain GET of a WebSocket route (was an empty 404)',
      request: (t, h) => `GET /sessions/${FUZZ_SESSION}/stream HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'a plain GET of /ops/events (was an empty 404)',
      request: (t, h) => `GET /ops/events HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'an upgrade of GET /health (was a 101, then a close without a code)',
      request: (t, h) => upgrade('/health', t, h),
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'a handshake with version 99 (was a text/html 400)',
      request: (t, h) => upgrade(`/sessions/${FUZZ_SESSION}/stream`, t, h).replace('Version: 13', 'Version: 99'),
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'a handshake without a key (was a text/html 400)',
      request: (t, h) => upgrade(`/sessions/${FUZZ_SESSION}/stream`, t, h).replace(/Sec-WebSocket-Key: \S+\r\n/, ''),
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'a description holding a lone surrogate (was a 200, and tmux kept U+FFFD in its place)',
      request: (t, h) => {
        const body = '{"description":"\\udfff1p"}';
        return `PATCH /sessions/${FUZZ_SESSION} HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      },
      status: 400,
      error: 'bad-request',
    },
    {
      what: 'an upgrade for an id that is no session name (was a 404)',
      request: (t, h) => upgrade('/sessions/a%3Bb/stream', t, h),
      status: 400,
      error: 'bad-request',
    },
  ];

  it.each(FOUND)('found by fuzzing: $what is a $status in the one error shape', async ({ request, status, error }) => {
    const ex = await exchange(t.peer, Buffer.from(request(t.token, t.host), 'latin1'), { timeoutMs: EXCHANGE_MS, keepOpen: true });
    ex.socket.destroy();
    const res = ex.responses[0];
    expect(res?.status).toBe(status);
    if (error !== null) expect(JSON.parse(res!.body.toString('utf8'))).toEqual({ error, message: expect.any(String) as string });
    await expectHealthy(t, EXCHANGE_MS, 'after it');
  });

  it('found by fuzzing: a device named with 64 emoji pairs, and so does the next one of that name (was a 500)', async () => {
    // The token name counted UTF-16 units where the device name's schema counts code points.
    const emoji = { pairingToken: 'x', deviceName: '\u{1f600}'.repeat(64) };
    for (let i = 0; i < 2; i++) await runPairCase(t, ledger, { token: 'fresh', body: emoji, burst: false }, { timeoutMs: EXCHANGE_MS });
    await expectHealthy(t, EXCHANGE_MS, 'after it');
  });

  it.each(['\u007f', ';\u007f', '\u0001'])(
    'found by fuzzing: a device name %j is a 400 that leaves the pairing token unspent (was a 500)',
    async (deviceName) => {
      // The name's pattern let one control character through where it wanted one that is not blank.
      await runPairCase(t, ledger, { token: 'fresh', body: { pairingToken: 'x', deviceName }, burst: false }, { timeoutMs: EXCHANGE_MS });
      await expectHealthy(t, EXCHANGE_MS, 'after it');
    },
  );

  /** Worktrees and diffs in the fuzzer's repository, the cases the random ones must not miss (docs/api.md "Worktrees and changes"). */
  const wtBody = (branch: string, from?: string) => ({ cwd: world.repo, worktree: { branch, ...(from === undefined ? {} : { from }) } });
  const diffOf = (path: string) =>
    api(t, 'GET', `/sessions/${FUZZ_GIT_SESSION}/changes/diff?path=${encodeURIComponent(path)}`, undefined, EXCHANGE_MS);

  it('a session asked for in a worktree of the repository is made in it, listed with it, and removed with it', async () => {
    const route = t.routes.find((r) => r.method === 'POST' && r.url === '/sessions')!;
    const body = { kind: 'json' as const, value: { name: 'fzwt', ...wtBody('fz/fixed', 'side') }, contentType: 'application/json' };
    await runRequestCase(
      t,
      ledger,
      { route, auth: { header: 'good', query: 'none', bad: 0 }, params: {}, query: [], body },
      { timeoutMs: EXCHANGE_MS },
    );
    expect(ledger.counts.get('git')?.get('worktree made and removed')).toBe(1);
    expect(world.repoState()).toEqual(world.repoAtStart);
  });

  it.each([
    ['a branch that is an option', () => wtBody(`--upload-pack=touch ${world.canaryDir}/upload-pack`)],
    ['a branch that is a short option', () => wtBody('-b')],
    ['a branch that names another (@{-1})', () => wtBody('@{-1}')],
    ['a branch with shell in it', () => wtBody(`$(touch ${world.canaryDir}/branch)`)],
    ['a from that is an option', () => wtBody('fz-from', `--output=${world.canaryDir}/from`)],
    ['a from that names no commit', () => wtBody('fz-from', 'HEAD~9')],
    ['a cwd in no repository', () => ({ cwd: world.canaryDir, worktree: { branch: 'fz-none' } })],
  ])('a worktree with %s is a 400 that leaves nothing', async (_what, body) => {
    const res = await api(t, 'POST', '/sessions', body(), EXCHANGE_MS);
    expect(res).toEqual({ status: 400, json: { error: 'bad-request', message: expect.any(String) as string } });
    expect(world.repoState()).toEqual(world.repoAtStart);
  });

  it("the diff of a changed file of the repository session is that file's diff", async () => {
    const res = await diffOf('src/a.txt');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ path: 'src/a.txt', status: 'modified', binary: false, truncated: false });
    expect((res.json as { diff: string }).diff).toContain('+three');
  });

  it.each(['../repo/new.txt', '/etc/passwd', 'out/x', 'out', '--output=CANARY/diff', '-R', ':!x', ':(glob)*', '*', 'semi;$(x) `y`.txt'])(
    'a diff of %j is refused or names just that path, and runs nothing',
    async (path) => {
      const asked = path.replace('CANARY', world.canaryDir);
      const res = await diffOf(asked);
      if (res.status === 200) expect(res.json).toMatchObject({ path: asked });
      else expect(res).toEqual({ status: 400, json: { error: 'bad-request', message: expect.any(String) as string } });
    },
  );

  it.each(RUNS)(
    '$surface: $runs cases, each answered as docs/api.md says',
    async ({ surface, runs }) => {
      await fuzzSurface(surface, t, ledger, { seed: SEED, numRuns: runs, timeoutMs: EXCHANGE_MS, ...(PATH ? { path: PATH } : {}) });
    },
    240_000,
  );

  it('ran nothing, kept exactly the sessions it reported, and the pane read exactly the input it took', async () => {
    await verifyLedger(t, ledger, fuzzProbes(world, fx.home.dataDir, tmux, wait), [FUZZ_SESSION, FUZZ_GIT_SESSION]);
    await expectHealthy(t, EXCHANGE_MS, 'after the fuzzing');
    process.stdout.write(`fuzz (seed ${SEED}):\n${ledger.summary()}\n`);
  }, 120_000);
});
