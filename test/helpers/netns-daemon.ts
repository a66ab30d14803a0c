/**
 * The built daemon in the "host" namespace of a test network (netns.ts) made before it starts and
 * removed after it stopped, for the tests of a `describe` that need root. A machine without
 * `ip` (iproute2) fails the tests: it is a missing install, not a reason to skip.
 */
import { beforeAll } from 'vitest';
import { useDaemon, type DaemonFixture } from './daemon-fixture.js';
import { canMakeNetworks, makeTestNetwork, type TestNetwork } from './netns.js';

export interface NetnsDaemon {
  readonly f: DaemonFixture;
  /** The network the daemon runs in. */
  readonly network: () => TestNetwork;
}

export function useNetnsDaemon(config: string): NetnsDaemon {
  beforeAll(() => {
    if (!canMakeNetworks()) throw new Error('ip is missing: apt-get install iproute2 (.ci/run does)');
  });
  let net: TestNetwork | null = null;
  const network = () => {
    if (net === null) throw new Error('the test network was not made');
    return net;
  };
  const f = useDaemon(config, {
    before: () => {
      net = makeTestNetwork();
    },
    after: () => net?.remove(),
    get wrap() {
      return net?.exec(net.host) ?? [];
    },
  });
  return { f, network };
}
