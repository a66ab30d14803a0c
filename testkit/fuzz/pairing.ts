/**
 * The pairing surface: `POST /pair` bodies from the route's own schema (fitting and hostile)
 * with a fresh pairing token, a used one, a wrong one or none, each case from an address of its
 * own (the route counts attempts per address), and now and then a burst from one address past
 * the limit.
 *
 * What each must get (docs/api.md "POST /pair"): a bad body is a 400 that does not spend the
 * token (the same token then pairs); a good body with a token that is not fresh is a 401; with a
 * fresh one a 201 whose token works and whose name is the device's; the 11th attempt a minute
 * from one address is a 429.
 */
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { RouteSchemas } from '../../src/transport/schemas/routes.checks.js';
import { errorShapeProblem } from './oracle.js';
import { exchange, httpRequest, type Peer } from './raw-http.js';
import { api } from './requests.js';
import { fitting, hostileValue, type JsonSchema } from './schema-arbitrary.js';
import { FuzzFinding, type FuzzLedger, type FuzzTarget } from './target.js';

/** Attempts a minute per address (docs/api.md). */
const PER_MINUTE = 10;
const PairBody = RouteSchemas.PairBody as unknown as JsonSchema;

export interface PairCase {
  readonly token: 'fresh' | 'used' | 'wrong' | 'absent';
  readonly body: unknown;
  /** Attempts sent first from the same address (a burst past the limit). */
  readonly burst: boolean;
}

export function pairCases(text: fc.Arbitrary<string>): fc.Arbitrary<PairCase> {
  return fc.record({
    token: fc.constantFrom('fresh', 'fresh', 'used', 'wrong', 'absent'),
    body: fc.oneof(fitting(PairBody, text), hostileValue(PairBody, text)),
    burst: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });
}

/** Whether a body is one `POST /pair` takes, its token aside (the schema and the pairing rules). */
function fitsPair(body: unknown): boolean {
  if (!Value.Check(PairBody as never, body)) return false;
  const b = body as { deviceToken?: string; environment?: string };
  return (b.deviceToken === undefined) === (b.environment === undefined);
}

let nextAddress = 2;
/** A loopback address no earlier case used (127.0.0.2 and on: the whole of 127/8 is this machine). */
function freshAddress(): string {
  while ([0, 1, 255].includes(nextAddress & 255)) nextAddress++;
  const n = nextAddress++;
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

async function pair(t: FuzzTarget, peer: Peer, body: unknown, timeoutMs: number) {
  const bytes = Buffer.from(JSON.stringify(body) ?? 'null');
  const req = httpRequest(
    'POST',
    '/pair',
    [
      ['Host', t.host],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(bytes.length)],
      ['Connection', 'close'],
    ],
    bytes,
  );
  const ex = await exchange(peer, req, { timeoutMs });
  return { ex, request: req };
}

/**
 * Whether a token's name is the device's (docs/api.md "POST /pair"): its surrounding blanks
 * trimmed, or `name (2)` when that is taken, the name cut (by code points) to keep 64 in all.
 */
function namesDevice(got: string, deviceName: string): boolean {
  const name = deviceName.trim();
  const taken = /^(.*) \((\d+)\)$/su.exec(got);
  return got === name || (taken !== null && name.startsWith(taken[1]!) && [...got].length <= 64);
}

export async function runPairCase(t: FuzzTarget, ledger: FuzzLedger, c: PairCase, opts: { timeoutMs: number }): Promise<void> {
  const peer: Peer = { ...t.peer, localAddress: freshAddress() };
  const fresh = t.newPairingToken();
  if (c.token === 'used') {
    const spent = await pair(t, peer, { pairingToken: fresh, deviceName: 'spent' }, opts.timeoutMs);
    if (spent.ex.responses[0]?.status !== 201) throw new FuzzFinding('a fresh pairing token did not pair', { answers: spent.ex.responses });
  }
  if (c.burst) {
    for (let i = c.token === 'used' ? 1 : 0; i < PER_MINUTE; i++)
      await pair(t, peer, { pairingToken: 'wrong', deviceName: 'burst' }, opts.timeoutMs);
  }
  const token = c.token === 'fresh' || c.token === 'used' ? fresh : c.token === 'wrong' ? 'fz-not-a-pairing-token' : undefined;
  const body =
    typeof c.body === 'object' && c.body !== null && !Array.isArray(c.body)
      ? { ...c.body, ...(token === undefined ? {} : { pairingToken: token }) }
      : c.body;
  if (token === undefined && typeof body === 'object' && body !== null) delete (body as { pairingToken?: unknown }).pairingToken;
  const { ex, request } = await pair(t, peer, body, opts.timeoutMs);
  const evidence = { request, answers: ex.responses.map((r) => ({ status: r.status, body: r.body })), error: ex.error };
  const res = ex.responses[0];
  if (!res || ex.responses.length !== 1) throw new FuzzFinding('not one answer to one pairing', evidence);
  ledger.count('pairing', String(res.status));
  const want = c.burst ? 429 : !fitsPair(body) ? 400 : c.token === 'fresh' ? 201 : 401;
  if (res.status !== want) throw new FuzzFinding(`a pairing answered ${res.status}, not ${want}`, evidence);
  const shape = errorShapeProblem(res, false);
  if (shape) throw new FuzzFinding(shape, evidence);
  if (res.status === 400 && c.token === 'fresh') {
    // A bad body does not spend the token.
    const again = await pair(t, peer, { pairingToken: fresh, deviceName: 'after a bad body' }, opts.timeoutMs);
    if (again.ex.responses[0]?.status !== 201)
      throw new FuzzFinding('a bad body spent the pairing token', { ...evidence, again: again.ex.responses });
  }
  if (res.status === 201) {
    const a = JSON.parse(res.body.toString('utf8')) as { token?: unknown; name?: unknown };
    if (typeof a.token !== 'string' || typeof a.name !== 'string' || !namesDevice(a.name, (body as { deviceName: string }).deviceName))
      throw new FuzzFinding('a pairing answer that does not name the device', evidence);
    const health = await api({ ...t, token: a.token }, 'GET', '/health', undefined, opts.timeoutMs);
    if (health.status !== 200) throw new FuzzFinding(`the paired token is refused (${health.status})`, evidence);
  }
  const crashes = t.crashes();
  if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
}
