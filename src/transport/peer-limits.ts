/**
 * What a peer may hold of the daemon (docs/reliability.md "Peers that hold sockets"): a bound on
 * every stage a connection can stall in, and caps on the connections that have not yet shown a
 * token, per remote address and in total, so that a flood from the network can neither run the
 * daemon out of descriptors nor keep the person's own phone out.
 *
 * Node bounds the stages it has a mechanism for (`serverTimeouts`: the TLS handshake, the
 * request headers, an idle keep-alive); `PeerGuard` (peer-guard.ts) does the rest (the caps, an
 * unauthenticated connection's whole life, an upgrade that gets no answer, a request body that
 * stops coming). This file holds the bounds and how an address is counted.
 */
import type { LingerLimits } from './lingering-close.js';

export interface PeerLimits extends LingerLimits {
  /** A TLS handshake must end within this of the TCP accept (node's `handshakeTimeout`). */
  readonly handshakeMs: number;
  /** A request's headers must be whole within this of its start (node's `headersTimeout`). */
  readonly headersMs: number;
  /** A connection that no request on it authenticated is closed this long after its accept. */
  readonly unauthenticatedMs: number;
  /** An upgrade request must be answered (101) within this of its headers. */
  readonly upgradeMs: number;
  /** An authenticated request's body must bring `bodyMinBytes` in every window of this length. */
  readonly bodyWindowMs: number;
  readonly bodyMinBytes: number;
  /** An idle kept-alive connection is closed after this (node's `keepAliveTimeout`; node adds 1 s). */
  readonly keepAliveMs: number;
  /** How often the bounds are checked (also node's `connectionsCheckingInterval`). */
  readonly checkIntervalMs: number;
  /** Unauthenticated connections from one address (an IPv6 address counts by its /64). */
  readonly perAddress: number;
  /**
   * With the unauthenticated total full, an address holding this many is refused; one holding
   * fewer (a phone's few) makes room by closing the oldest connection of the busiest address.
   */
  readonly perAddressWhenFull: number;
  /** Unauthenticated connections in all. */
  readonly unauthenticated: number;
  /** Authenticated connections in all. */
  readonly authenticated: number;
}

export const PEER_LIMITS: PeerLimits = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  unauthenticatedMs: 15_000,
  upgradeMs: 10_000,
  bodyWindowMs: 30_000,
  bodyMinBytes: 1024,
  keepAliveMs: 5_000,
  // A 20 MB body from a client that reads its answer only once it has sent it all (most read it
  // at once and stop sending) is drained on a LAN well within the 5 s.
  lingerMs: 5_000,
  lingerBytes: 64 * 1024 * 1024,
  // Without a token, the body of a 401 is not worth reading far (any client that reads its
  // answer while sending reads it).
  lingerBytesUnauthenticated: 1024 * 1024,
  checkIntervalMs: 1_000,
  perAddress: 128,
  perAddressWhenFull: 16,
  unauthenticated: 256,
  authenticated: 256,
};

/** Node's own options for the bounds it enforces itself (http and https servers alike). */
export function serverTimeouts(limits: PeerLimits) {
  return {
    headersTimeout: limits.headersMs,
    // Bodies are bounded by their progress (PeerGuard): a large upload over a slow link may take
    // minutes, which a bound on the whole request would cut.
    requestTimeout: 0,
    keepAliveTimeout: limits.keepAliveMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
  } as const;
}

/**
 * The key an address is counted under: an IPv4 address itself (also when written IPv4-mapped),
 * an IPv6 address by its first 64 bits, the network one host is given.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0]!.toLowerCase();
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = bare.split('::');
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
