/**
 * The connection surface: bytes that are not the protocol the port speaks, sent before anything
 * else: plain HTTP and random bytes to the TLS port, a TLS record header with a body of noise, an
 * SSLv2 hello, an HTTP/2 preface; random bytes to a plain port.
 *
 * What each must get: the connection ends (an alert, a 400, or a close), never a success, and the
 * daemon goes on serving.
 */
import fc from 'fast-check';
import { exchange } from './raw-http.js';
import { FuzzFinding, type FuzzLedger, type FuzzTarget } from './target.js';

export type NoiseCase = Uint8Array;

export const noiseCases: fc.Arbitrary<NoiseCase> = fc.oneof(
  fc.constantFrom(
    Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'),
    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    Buffer.from([0x80, 0x2e, 0x01, 0x00, 0x02, 0x00, 0x15]),
    Buffer.from([0x16, 0x03, 0x01, 0xff, 0xff]),
    Buffer.from([0x16, 0x03, 0x03, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]),
    Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]),
    Buffer.alloc(4096),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 2048 }),
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, b.length >> 8, b.length & 255]), b])),
);

export async function runNoiseCase(t: FuzzTarget, ledger: FuzzLedger, c: NoiseCase, opts: { timeoutMs: number }): Promise<void> {
  // The noise goes on a plain TCP socket whatever the port speaks.
  // A TLS record that announces more bytes than come leaves the server waiting: a quiet server ends the exchange.
  const ex = await exchange({ ...t.peer, tls: false }, Buffer.from(c), { timeoutMs: opts.timeoutMs, quietMs: 300 });
  const answered = ex.responses.map((r) => r.status);
  ledger.count('noise', answered.length > 0 ? answered.join(',') : ex.error ? 'reset' : 'closed');
  const evidence = { sent: Buffer.from(c).subarray(0, 200), answered, rest: ex.rest.subarray(0, 100), error: ex.error };
  if (answered.some((s) => s < 400)) throw new FuzzFinding('noise was answered with a success', evidence);
  const crashes = t.crashes();
  if (crashes.length > 0) throw new FuzzFinding('the daemon raised an error nothing caught', { ...evidence, crashes });
}
