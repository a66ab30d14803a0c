/**
 * The ways the HTTP framing surface spoils a correct request, each a named change with a number
 * that picks its variant (so fast-check can shrink a case to the one change that matters):
 * request line, line ends, headers, body framing, pipelining, split writes.
 */
import type { FuzzTarget } from './target.js';

/** The ways a request is spoiled; each takes a number that picks its variant. */
export const MUTATIONS = [
  'method-lower',
  'method-token',
  'method-odd',
  'method-long',
  'target-absolute',
  'target-star',
  'target-pct-bad',
  'target-raw-bytes',
  'target-long',
  'target-dots',
  'target-fragment',
  'version',
  'eol-lf',
  'eol-cr',
  'header-fold',
  'header-space-colon',
  'header-bad-name',
  'header-bad-value',
  'header-huge',
  'header-many',
  'host',
  'auth-dup',
  'auth-lower',
  'cl-odd',
  'cl-dup',
  'cl-short',
  'cl-long',
  'te',
  'te-and-cl',
  'chunk-bad',
  'expect',
  'pipeline',
  'tail-garbage',
  'split',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** A request being spoiled, part by part. */
export interface Draft {
  method: string;
  target: string;
  version: string;
  eol: string;
  headers: [string, string][];
  rawLines: string[];
  body: Buffer;
  framing: 'cl' | 'chunked' | 'none';
  tail: Buffer;
  pieces: number;
}

const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length]!;

/** Applies one change to the draft. */
export function mutate(d: Draft, m: Mutation, n: number, t: FuzzTarget): void {
  const setHeader = (k: string, v: string) => {
    d.headers = d.headers.filter(([h]) => h.toLowerCase() !== k.toLowerCase());
    d.headers.push([k, v]);
  };
  switch (m) {
    case 'method-lower':
      d.method = d.method.toLowerCase();
      return;
    case 'method-token':
      d.method = pick(['FOO', 'PROPFIND', 'CONNECT', 'TRACE', 'OPTIONS', 'PURGE', 'M-SEARCH', 'QUERY', 'PRI'], n);
      return;
    case 'method-odd':
      d.method = pick(['G T', 'GET\u0000', '', '\u00c9T', 'GET\t', '/'], n);
      return;
    case 'method-long':
      d.method = 'A'.repeat(pick([64, 1024, 70_000], n));
      return;
    case 'target-absolute':
      d.target = `${pick(['http', 'https', 'ws', 'file'], n)}://${pick([t.host, 'evil.example', '[::1]', 'a@b'], n >> 2)}${d.target}`;
      return;
    case 'target-star':
      d.target = '*';
      return;
    case 'target-pct-bad':
      d.target = pick(
        [`${d.target}%`, `${d.target}%G1`, d.target.replace('/', '/%zz'), `${d.target}?a=%`, `${d.target}%00`, '/%2e%2e/health'],
        n,
      );
      return;
    case 'target-raw-bytes':
      d.target = pick(
        [`${d.target}\u00e9`, `${d.target} x`, `${d.target}\u0000`, `${d.target}\u007f`, `/\u00ff${d.target}`, `${d.target}\t`],
        n,
      );
      return;
    case 'target-long':
      d.target = `${d.target}${d.target.includes('?') ? '&' : '?'}x=${'a'.repeat(pick([8_000, 70_000, 200_000], n))}`;
      return;
    case 'target-dots':
      d.target = pick([`/sessions/../${d.target}`, `//${d.target}`, `${d.target}/.`, `/./${d.target}`, `\\${d.target}`, `${d.target}/`], n);
      return;
    case 'target-fragment':
      d.target = `${d.target}#${pick(['x', 'token=a', '/../../x'], n)}`;
      return;
    case 'version':
      d.version = pick(['HTTP/1.0', '', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/1.1 x', 'HTTP/1.10', 'HTTP/9.9', 'HTTP/1.1\u0000'], n);
      return;
    case 'eol-lf':
      d.eol = '\n';
      return;
    case 'eol-cr':
      d.eol = '\r';
      return;
    case 'header-fold':
      d.rawLines.push(`X-Folded: a`, pick([' b', '\tb', ' Authorization: Bearer x'], n));
      return;
    case 'header-space-colon':
      d.rawLines.push(pick(['Host : x', 'Content-Length : 0', 'Authorization : Bearer x', 'Transfer-Encoding : chunked'], n));
      return;
    case 'header-bad-name':
      d.rawLines.push(`${pick(['X Y', 'X\u0000Y', '(x)', '\u00e9', '', 'X:Y:Z', 'X\tY'], n)}: v`);
      return;
    case 'header-bad-value':
      d.rawLines.push(`X-Bad: ${pick(['a\u0000b', 'a\rb', '\u007f', '\u00ff\u00fe', 'a\u000bb'], n)}`);
      return;
    case 'header-huge':
      d.headers.push(['X-Huge', 'h'.repeat(pick([8_000, 17_000, 100_000], n))]);
      return;
    case 'header-many':
      for (let i = 0; i < pick([100, 2100, 5000], n); i++) d.headers.push([`X-H${i}`, 'v']);
      return;
    case 'host':
      if (n % 3 === 0) d.headers = d.headers.filter(([h]) => h !== 'Host');
      else d.headers.push(['Host', pick(['', 'evil.example', 'a b', '[::1', `${t.host}:1`], n)]);
      return;
    case 'auth-dup':
      d.headers.push(['Authorization', `Bearer ${pick(t.badTokens, n)}`]);
      if (n % 2) d.headers.reverse();
      return;
    case 'auth-lower':
      d.headers = d.headers.map(([k, v]) =>
        k === 'Authorization' ? ['authorization', v.replace('Bearer', pick(['bearer', 'BEARER', 'Bearer  ', 'Bearer\t'], n))] : [k, v],
      );
      return;
    case 'cl-odd':
      d.framing = 'none';
      setHeader(
        'Content-Length',
        pick(
          [
            '-1',
            `+${d.body.length}`,
            `0x${d.body.length.toString(16)}`,
            `${d.body.length} `,
            `1 0`,
            '99999999999999999999',
            `${d.body.length}.0`,
            '',
          ],
          n,
        ),
      );
      return;
    case 'cl-dup':
      d.framing = 'none';
      d.headers.push(['Content-Length', String(d.body.length)], ['Content-Length', String(n % 2 ? d.body.length : d.body.length + 1)]);
      return;
    case 'cl-short':
      d.framing = 'none';
      setHeader('Content-Length', String(Math.max(0, d.body.length - 1 - (n % 4))));
      return;
    case 'cl-long':
      d.framing = 'none';
      setHeader('Content-Length', String(d.body.length + 1 + (n % 100)));
      return;
    case 'te':
      d.framing = n % 4 === 0 ? 'none' : 'chunked';
      setHeader(
        'Transfer-Encoding',
        pick(
          [
            'chunked',
            'Chunked',
            ' chunked',
            'chunked, identity',
            'identity',
            'gzip, chunked',
            'xchunked',
            'chunked\u000b',
            'chunked, chunked',
          ],
          n,
        ),
      );
      d.headers = d.headers.filter(([h]) => h !== 'Content-Length');
      return;
    case 'te-and-cl':
      d.framing = 'chunked';
      d.headers.push(['Transfer-Encoding', 'chunked']);
      return;
    case 'chunk-bad':
      d.framing = 'none';
      d.headers = d.headers.filter(([h]) => h !== 'Content-Length');
      d.headers.push(['Transfer-Encoding', 'chunked']);
      d.body = Buffer.from(
        pick(
          [
            `zz\r\n${d.body.toString()}\r\n0\r\n\r\n`,
            `${d.body.length.toString(16)}\r\n${d.body.toString()}0\r\n\r\n`,
            `fffffffffffffffff\r\n`,
            `${d.body.length.toString(16)};ext=1\r\n${d.body.toString()}\r\n0\r\nX-Trailer: 1\r\n\r\n`,
            `${d.body.length.toString(16)}\n${d.body.toString()}\n0\n\n`,
            `-1\r\n\r\n`,
          ],
          n,
        ),
        'latin1',
      );
      return;
    case 'expect':
      d.headers.push(['Expect', pick(['100-continue', '200-ok', ''], n)]);
      return;
    case 'pipeline':
      d.headers = d.headers.filter(([h]) => h !== 'Connection');
      d.tail = Buffer.concat([
        d.tail,
        Buffer.from(
          `GET ${pick(['/health', '/sessions', '/nope'], n)} HTTP/1.1\r\nHost: ${t.host}\r\n${n % 2 ? `Authorization: Bearer ${t.token}\r\n` : ''}\r\n`,
        ),
      ]);
      return;
    case 'tail-garbage':
      d.tail = Buffer.concat([d.tail, Buffer.from(pick(['\r\n\r\n', 'GARBAGE\r\n\r\n', '\u0000\u0000', '0\r\n\r\n'], n), 'latin1')]);
      return;
    case 'split':
      d.pieces = 2 + (n % 6);
      return;
  }
}
