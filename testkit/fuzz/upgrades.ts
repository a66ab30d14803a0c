/**
 * The upgrade surface: WebSocket handshakes to every route of the server's table (and to none),
 * before the token and after it, with the handshake's headers spoiled one by one: no Upgrade or
 * the wrong one, no Connection upgrade, a bad or missing key or version, extension and
 * subprotocol offers ws cannot read, a query the stream does not take.
 *
 * What each must get: 401 without the token; 404 for no route or no session; a 400 in the one
 * error shape for a handshake or query that is wrong, or for an upgrade to a route that is not a
 * WebSocket; and 101 (with the right Sec-WebSocket-Accept, then the session's `session-meta`)
 * exactly for a good handshake to a WebSocket route of a live session.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { allowedStatuses, errorShapeProblem } from './oracle.js';
import { exchange } from './raw-http.js';
import { settle } from './raw-requests.js';
import { unreadable } from './requests.js';
import { closePayload, OP, upgradeRequest, WsReader } from './raw-ws.js';
import { FuzzFinding, type FuzzLedger, type FuzzRoute, type FuzzTarget } from './target.js';
import { authCases, authenticated, authParts, fillPath, queryString, type AuthCase } from './wire.js';

export interface HandshakeCase {
  readonly method: 'GET' | 'POST';
  readonly upgrade: string | null;
  readonly connection: string | null;
  readonly version: string | null;
  readonly key: 'good' | 'short' | 'garbage' | null;
  readonly extensions: string | null;
  readonly protocol: string | null;
  readonly origin: string | null;
}

export interface UpgradeCase {
  readonly route: FuzzRoute | null;
  readonly auth: AuthCase;
  readonly param: string;
  readonly query: readonly (readonly [string, string])[];
  readonly handshake: HandshakeCase;
}

/** Extension offers ws reads (or refuses with a 400) and subprotocol lists. */
const GOOD_EXTENSIONS = [
  'permessage-deflate',
  'permessage-deflate; client_max_window_bits',
  'permessage-deflate; client_no_context_takeover; server_no_context_takeover',
  'x-unknown',
];
const BAD_EXTENSIONS = [
  'permessage-deflate; server_max_window_bits=99',
  'permessage-deflate; client_max_window_bits=0',
  ';;',
  'permessage-deflate; a="',
  'permessage-deflate, permessage-deflate; x',
];
const PROTOCOLS = ['chat', 'a, b', ',,', 'a b', '"x"', ''];

const GOOD_HANDSHAKE: HandshakeCase = {
  method: 'GET',
  upgrade: 'websocket',
  connection: 'Upgrade',
  version: '13',
  key: 'good',
  extensions: null,
  protocol: null,
  origin: null,
};

/** A good handshake with at most two of its parts spoiled (so most reach the checks behind the first). */
const spoilers: readonly fc.Arbitrary<Partial<HandshakeCase>>[] = [
  fc.record({ method: fc.constant('POST' as const) }),
  fc.record({ upgrade: fc.constantFrom('WebSocket', 'h2c', 'websocket, h2c', null) }),
  fc.record({ connection: fc.constantFrom('keep-alive, Upgrade', 'upgrade', 'close', null) }),
  fc.record({ version: fc.constantFrom('8', '99', '', 'x', null) }),
  fc.record({ key: fc.constantFrom('short' as const, 'garbage' as const, null) }),
  fc.record({ extensions: fc.constantFrom(...GOOD_EXTENSIONS, ...BAD_EXTENSIONS) }),
  fc.record({ protocol: fc.constantFrom(...PROTOCOLS) }),
  fc.record({ origin: fc.constantFrom('https://evil.example', 'null') }),
];
const handshakes: fc.Arbitrary<HandshakeCase> = fc
  .array(fc.oneof(...spoilers), { maxLength: 2 })
  .map((parts) => Object.assign({}, GOOD_HANDSHAKE, ...parts) as HandshakeCase);

/** The stream's query: `lastSeq` (good, spoiled, or on a route that takes none) and stray keys. */
const streamQuery = (text: fc.Arbitrary<string>): fc.Arbitrary<[string, string][]> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 2, arbitrary: fc.stringMatching(/^(null|0|[1-9][0-9]{0,15})$/) },
        { weight: 1, arbitrary: fc.constantFrom('-1', '1.5', '1e3', '9007199254740993', 'NULL', '') },
        { weight: 1, arbitrary: text },
      ),
      fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('x', 'from', '__proto__', 'lastseq') }),
    )
    .map(([lastSeq, stray]) => [
      ...(lastSeq === null ? [] : [['lastSeq', lastSeq] as [string, string]]),
      ...(stray === null ? [] : [[stray, '1'] as [string, string]]),
    ]);

export function upgradeCases(t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<UpgradeCase> {
  const routes = t.routes.filter((r) => r.method === 'GET');
  const ws = routes.filter((r) => r.websocket);
  return fc.record({
    route: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...ws) },
      { weight: 2, arbitrary: fc.constantFrom(...routes) },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    auth: authCases,
    param: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...t.live) },
      { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{1,8}$/) },
      { weight: 1, arbitrary: text },
    ),
    query: streamQuery(text),
    handshake: handshakes,
  });
}

/**
 * What the handshake must be answered with: a status, the route's own answers (not an upgrade at
 * all, to a route that is not a WebSocket), or either 101 or 400 (an offer only ws's parser judges).
 */
type Expected = { readonly status: number } | { readonly route: true } | { readonly either: true };

function expected(t: FuzzTarget, c: UpgradeCase): Expected {
  if (c.route?.auth !== 'none' && !authenticated(c.auth)) return { status: 401 };
  const h = c.handshake;
  const url = c.route?.url;
  const served = t.routes.find((r) => r.method === h.method && r.url === url);
  if (!c.route || !served) return { status: 404 };
  const isUpgrade = h.upgrade !== null && h.connection !== null && /(^|,)\s*upgrade\s*(,|$)/i.test(h.connection);
  if (!served.websocket) return isUpgrade ? { status: 400 } : { route: true };
  if (!isUpgrade) return { status: 400 };
  const stream = c.route.url.startsWith('/sessions/');
  if (stream) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(c.param)) return { status: 400 };
    const stray = c.query.some(([k]) => k !== 'lastSeq');
    const lastSeq = c.query.find(([k]) => k === 'lastSeq')?.[1];
    const goodSeq = (v: string) => /^(null|0|[1-9][0-9]{0,15})$/.test(v) && (v === 'null' || Number.isSafeInteger(Number(v)));
    if (stray || (lastSeq !== undefined && (c.route.url.endsWith('/side') || !goodSeq(lastSeq)))) return { status: 400 };
    if (!t.live.includes(c.param)) return { status: 404 };
  }
  if (h.upgrade.toLowerCase() !== 'websocket' || h.key !== 'good' || (h.version !== '13' && h.version !== '8')) return { status: 400 };
  if (h.protocol !== null && h.protocol !== 'chat' && h.protocol !== 'a, b') return { either: true };
  if (h.extensions !== null && !GOOD_EXTENSIONS.includes(h.extensions)) return { either: true };
  return { status: 101 };
}

function handshakeHeaders(t: FuzzTarget, c: UpgradeCase, key: string): [string, string][] {
  const h = c.handshake;
  const keyValue = h.key === 'good' ? key : h.key === 'short' ? key.slice(0, 10) : h.key === 'garbage' ? '!!not base64!!' : null;
  const all: [string, string | null][] = [
    ['Host', t.host],
    ['Connection', h.connection],
    ['Upgrade', h.upgrade],
    ['Sec-WebSocket-Version', h.version],
    ['Sec-WebSocket-Key', keyValue],
    ['Sec-WebSocket-Extensions', h.extensions],
    ['Sec-WebSocket-Protocol', h.protocol],
    ['Origin', h.origin],
  ];
  return [...(all.filter(([, v]) => v !== null) as [string, string][]), ...authParts(t, c.auth).headers];
}

export async function runUpgradeCase(t: FuzzTarget, ledger: FuzzLedger, c: UpgradeCase, opts: { timeoutMs: number }): Promise<void> {
  const key = createHash('sha256').update(String(Math.random())).digest().subarray(0, 16).toString('base64');
  const auth = authParts(t, c.auth);
  const path = (c.route ? fillPath(c.route, { id: c.param }) : '/sessions/nope/streams') + queryString([...c.query, ...auth.query]);
  let bytes = upgradeRequest(path, handshakeHeaders(t, c, key));
  if (c.handshake.method === 'POST') bytes = Buffer.from(bytes.toString('latin1').replace(/^GET/, 'POST'), 'latin1');
  const ex = await exchange(t.peer, bytes, { timeoutMs: opts.timeoutMs, keepOpen: true });
  const evidence = {
    request: bytes,
    answers: ex.responses.map((r) => ({ status: r.status, headers: r.headers, body: r.body.subarray(0, 300) })),
    error: ex.error,
  };
  try {
    const crashes = t.crashes();
    if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
    if (ex.hung) throw new FuzzFinding(`no answer to a handshake within ${opts.timeoutMs} ms`, evidence);
    const res = ex.responses[0];
    if (!res) throw new FuzzFinding('a handshake closed without an answer', evidence);
    ledger.count('upgrades', String(res.status));
    const want = expected(t, c);
    // A request that cannot be read (a path part over 100 characters) is refused before all else.
    const ok =
      ((res.status === 400 || res.status === 431) && unreadable(res)) ||
      ('status' in want
        ? res.status === want.status
        : 'either' in want
          ? [101, 400].includes(res.status)
          : allowedStatuses(c.handshake.method, c.route!.url).has(res.status));
    if (!ok) throw new FuzzFinding(`a handshake answered ${res.status}, not ${JSON.stringify(want)}`, evidence);
    await settle(t, ledger, res, opts.timeoutMs);
    if (res.status === 401 && res.headers['www-authenticate'] !== 'Bearer')
      throw new FuzzFinding('a 401 without WWW-Authenticate: Bearer', evidence);
    const shape = errorShapeProblem(res, false);
    if (shape) throw new FuzzFinding(shape, evidence);
    if (res.status !== 101) return;
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    if (res.headers['sec-websocket-accept'] !== accept) throw new FuzzFinding('a 101 with the wrong Sec-WebSocket-Accept', evidence);
    const reader = new WsReader(ex.socket, ex.rest);
    const hasMeta = (cv: { texts: readonly string[] }) => cv.texts.some((s) => s.includes('"session-meta"'));
    if (c.route?.url.startsWith('/sessions/') && !(await reader.until(hasMeta, opts.timeoutMs)))
      throw new FuzzFinding('an upgraded stream sent no session-meta', { ...evidence, conversation: reader.seen() });
    reader.send({ fin: true, rsv: 0, opcode: OP.close, masked: true, payload: closePayload(1000) });
    await reader.until(() => false, opts.timeoutMs);
    if (reader.closeCode !== 1000)
      throw new FuzzFinding(`a polite close was answered with ${reader.closeCode}`, { ...evidence, end: reader.seen() });
  } finally {
    ex.socket.destroy();
  }
}
