/**
 * The worker thread the mDNS advertisement runs in (advertiser.ts starts it with the
 * advertisement as its data). The responder is @homebridge/ciao: RFC 6762/6763 probing, a new
 * name on a conflict, per-interface answers, re-announcing when an interface or address changes,
 * goodbye packets at the end.
 *
 * Why a thread of its own: what the library writes to the console (it writes there when an
 * interface cannot be bound, for instance) goes to the daemon's log instead of its stdout, which
 * carries exactly one line; a path where it ends its process ends this thread only; its global
 * hooks (stack-trace mapping) stay in this isolate; and its packets never take the daemon's
 * event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getResponder } from '@homebridge/ciao';
import { MDNS_SERVICE_TYPE } from './advertisement.js';
import type { WorkerData, WorkerNews, WorkerOrder } from './advertiser.js';

const ad = workerData as WorkerData;
const tell = (news: WorkerNews) => parentPort?.postMessage(news);

// Always named: without a list the library looks for interfaces itself, and misses some (advertiser.ts).
const responder = getResponder({ interface: ad.onlyAddress ?? [...(ad.interfaces ?? [])] });
const service = responder.createService({
  name: ad.instance,
  type: MDNS_SERVICE_TYPE,
  port: ad.port,
  hostname: ad.hostname,
  txt: { ...ad.txt },
  disabledIpv6: !ad.ipv6,
  ...(ad.onlyAddress !== null ? { restrictedAddresses: [ad.onlyAddress] } : {}),
});
service.on('name-change', (instance: string) => tell({ type: 'renamed', instance }));
// The host name is tether's own; a conflict on it is resolved by the library, and only said here.
service.on('hostname-change', (hostname: string) => tell({ type: 'hostname', hostname }));

parentPort?.on('message', (order: WorkerOrder) => {
  if (order.type !== 'stop') return;
  // Goodbye packets (TTL 0) for every record, then the sockets are closed.
  responder.shutdown().then(
    () => tell({ type: 'stopped' }),
    (err: Error) => tell({ type: 'stopped', error: err.message }),
  );
});

service.advertise().then(
  () => tell({ type: 'advertising' }),
  (err: Error) => {
    throw err; // the thread ends with it, and the advertiser says why
  },
);
