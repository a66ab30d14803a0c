/**
 * How the fuzzer's cases become bytes: percent-encoding that survives any string (lone
 * surrogates included), a route's path with its parameters filled, the ways a request can carry
 * a token (or fail to), and the content types a peer may claim.
 */
import fc from 'fast-check';
import type { FuzzRoute, FuzzTarget } from './target.js';

/** Percent-encodes the UTF-8 bytes of `s` (a lone surrogate becomes U+FFFD, as any encoder makes it). */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The route's path with `params` filled in, percent-encoded. */
export function fillPath(route: FuzzRoute, params: Readonly<Record<string, string>>): string {
  return route.url.replace(/:([A-Za-z]+)(\.svg)?/g, (_m, name: string, svg: string | undefined) => pct(params[name] ?? 'x') + (svg ?? ''));
}

/** The names of a route's path parameters. */
export const paramNames = (route: FuzzRoute): string[] => [...route.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);

/** How a request carries (or fails to carry) its credentials. */
export interface AuthCase {
  readonly header: 'none' | 'good' | 'bad' | 'basic-good' | 'bearer-junk' | 'cookie-good';
  readonly query: 'none' | 'good' | 'bad' | 'empty';
  /** Which of the target's bad tokens. */
  readonly bad: number;
}

/** Mostly the token where it counts (the routes' own answers are the most to check), else every way of getting it wrong. */
export const authCases: fc.Arbitrary<AuthCase> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ header: fc.constant('good' as const), query: fc.constantFrom('none' as const, 'bad' as const), bad: fc.nat(7) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      header: fc.constantFrom('none' as const, 'basic-good' as const),
      query: fc.constant('good' as const),
      bad: fc.nat(7),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      header: fc.constantFrom('none', 'bad', 'basic-good', 'bearer-junk', 'cookie-good'),
      query: fc.constantFrom('none', 'bad', 'empty'),
      bad: fc.nat(7),
    }),
  },
);

/**
 * Whether the request gets in (docs/api.md): a Bearer header decides alone, good or not; a
 * header of another scheme is passed over for `?token=`.
 */
export function authenticated(a: AuthCase): boolean {
  if (a.header === 'good') return true;
  if (a.header === 'bad' || a.header === 'bearer-junk') return false;
  return a.query === 'good';
}

/** The headers and query pairs of an auth case. */
export function authParts(t: FuzzTarget, a: AuthCase): { headers: [string, string][]; query: [string, string][] } {
  const bad = t.badTokens[a.bad % t.badTokens.length]!;
  const headers: [string, string][] = [];
  if (a.header === 'good') headers.push(['Authorization', `Bearer ${t.token}`]);
  if (a.header === 'bad') headers.push(['Authorization', `Bearer ${bad}`]);
  if (a.header === 'basic-good') headers.push(['Authorization', `Basic ${Buffer.from(`u:${t.token}`).toString('base64')}`]);
  if (a.header === 'bearer-junk') headers.push(['Authorization', `Bearer ${t.token} ${t.token}`]);
  if (a.header === 'cookie-good') headers.push(['Cookie', `token=${t.token}`]);
  const query: [string, string][] = [];
  if (a.query === 'good') query.push(['token', t.token]);
  if (a.query === 'bad') query.push(['token', bad]);
  if (a.query === 'empty') query.push(['token', '']);
  return { headers, query };
}

/** A query string from pairs (repeats kept), or '' for none. */
export const queryString = (pairs: readonly (readonly [string, string])[]): string =>
  pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')}`;

/** Content types a peer may claim for a body. */
export const contentTypes: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'application/json, text/plain',
      '*/*',
      ';',
    ),
  },
  { weight: 1, arbitrary: fc.constant(null) },
);

/** Whether fastify reads a body for this method. */
export const takesBody = (method: string): boolean => ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(method);
