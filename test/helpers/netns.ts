/**
 * A small network made of two network namespaces for a test, so that nothing of the machine's
 * own network is touched: "host" (where tether runs) holds, in this order, a software bridge
 * with an address (so that it comes first in os.networkInterfaces(), as docker0 often does), a
 * veth pair with an address, and the uplink, a veth whose peer is in "lan" (where the phone is)
 * and which holds the default route. Traffic only ever goes between these namespaces.
 *
 * Needs root and iproute2. `remove()` deletes both namespaces (and so every interface in them)
 * and the name file below /etc/netns; it is safe to call after a half-made network.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestNetwork {
  readonly host: string;
  readonly lan: string;
  /** The uplink's address in "host" (what a phone in "lan" reaches), as the network was made. */
  readonly uplinkAddress: string;
  /** The address of the other end of the uplink, in "lan" (the phone's). */
  readonly lanAddress: string;
  readonly bridge: string;
  readonly bridgeAddress: string;
  readonly vethAddress: string;
  /** Argv prefix that runs a program in a namespace (`ip netns exec <ns>`). */
  readonly exec: (ns: string) => readonly string[];
  /** Makes `name` resolve to `address` for programs run in "lan" (/etc/netns/<lan>/hosts). */
  readonly nameInLan: (name: string, address: string) => void;
  /** Gives the uplink `address` (same /24) in place of its own, as a new DHCP lease would, default route included. */
  readonly renumberUplink: (address: string) => void;
  remove(): void;
}

const ETC_NETNS = '/etc/netns';

/** Root with the ip program: the tests that build networks can run. */
export function canMakeNetworks(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function makeTestNetwork(): TestNetwork {
  const id = randomBytes(3).toString('hex');
  const host = `tether-host-${id}`;
  const lan = `tether-lan-${id}`;
  const madeEtcNetns = !existsSync(ETC_NETNS);
  const remove = () => {
    for (const ns of [host, lan]) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // Not made, or already gone.
      }
    }
    rmSync(join(ETC_NETNS, lan), { recursive: true, force: true });
    if (madeEtcNetns && existsSync(ETC_NETNS) && readdirSync(ETC_NETNS).length === 0) rmdirSync(ETC_NETNS);
  };
  const net: TestNetwork = {
    host,
    lan,
    uplinkAddress: '10.201.0.2',
    lanAddress: '10.201.0.1',
    bridge: 'tbr-x',
    bridgeAddress: '172.31.77.1',
    vethAddress: '10.99.0.1',
    exec: (ns) => ['ip', 'netns', 'exec', ns],
    nameInLan: (name, address) => {
      mkdirSync(join(ETC_NETNS, lan), { recursive: true });
      writeFileSync(join(ETC_NETNS, lan, 'hosts'), `127.0.0.1 localhost\n::1 localhost\n${address} ${name}\n`);
    },
    renumberUplink: (address) => {
      ip('-n', host, 'addr', 'flush', 'dev', 'uplink0', 'scope', 'global');
      ip('-n', host, 'addr', 'add', `${address}/24`, 'dev', 'uplink0');
      ip('-n', host, 'route', 'replace', 'default', 'via', net.lanAddress, 'dev', 'uplink0');
    },
    remove,
  };
  try {
    ip('netns', 'add', host);
    ip('netns', 'add', lan);
    const inHost = (...args: string[]) => ip('-n', host, ...args);
    // The bridge first: it gets the lowest index, and so comes first in the OS's list.
    inHost('link', 'add', net.bridge, 'type', 'bridge');
    inHost('addr', 'add', `${net.bridgeAddress}/24`, 'dev', net.bridge);
    inHost('link', 'add', 'veth-tx0', 'type', 'veth', 'peer', 'name', 'veth-tx1');
    inHost('addr', 'add', `${net.vethAddress}/24`, 'dev', 'veth-tx0');
    inHost('link', 'add', 'uplink0', 'type', 'veth', 'peer', 'name', 'lan0', 'netns', lan);
    inHost('addr', 'add', `${net.uplinkAddress}/24`, 'dev', 'uplink0');
    ip('-n', lan, 'addr', 'add', `${net.lanAddress}/24`, 'dev', 'lan0');
    for (const dev of ['lo', net.bridge, 'veth-tx0', 'veth-tx1', 'uplink0']) inHost('link', 'set', dev, 'up');
    for (const dev of ['lo', 'lan0']) ip('-n', lan, 'link', 'set', dev, 'up');
    inHost('route', 'add', 'default', 'via', net.lanAddress, 'dev', 'uplink0');
  } catch (err) {
    remove();
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`the test network could not be made: ${(err as Error).message} ${stderr}`, { cause: err });
  }
  return net;
}
