/**
 * Loopback ports for the tests and the benchmarks: a daemon that must come back on the same
 * address after a restart, or a peer server that needs a port before it starts.
 */
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolvePort(addr.port) : reject(new Error('no port'))));
    });
  });
}
