/**
 * Advertises the daemon on the local network by DNS-SD over mDNS (docs/pairing.md "Finding the
 * daemon again"), from a worker thread (advertise-worker.ts) that holds the responder library;
 * nothing of it loads until `start()`. This side keeps the worker running: what the worker
 * writes goes to the log, a worker that fails is started again after a back-off, and `stop()`
 * sends the goodbye packets before the daemon goes.
 *
 * The worker is told which interfaces to answer on (chosen in answering-interfaces.ts). An
 * interface that comes or goes, or an address of one that changes (a new DHCP lease), is seen
 * here within INTERFACE_POLL_MS, and the worker is started again: goodbye from the old one, a
 * fresh responder with the daemon's own name. The library
 * follows address changes itself too, by probing its name again, and on Linux that probe can
 * take its own answers for another device's: every socket hears every interface's packets, its
 * own looped back, and the library knows its own per interface only, so an answer it sent on
 * one interface just before, heard on another, made it `name (2)` (docs/pairing.md). The fresh
 * responder puts the name back.
 *
 * Invariant: advertising never takes the daemon down or writes to its stdout; a failure is a
 * state (`retrying`, with the reason) that `/health` shows.
 */
import { networkInterfaces } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { Advertisement } from './advertisement.js';
import { addressesOn, answeringInterfaces, type Answering, type InterfaceMap } from './answering-interfaces.js';

/**
 * `off` (not advertised; the reason says why), `starting` (probing the name on the network),
 * `advertising`, `retrying` (failed; the reason says why).
 */
export type MdnsState = 'off' | 'starting' | 'advertising' | 'retrying';

/** What `/health` says of the advertisement (docs/api.md "GET /health", `mdns`). */
export interface MdnsStatus {
  readonly state: MdnsState;
  /** Why it is off or retrying; null otherwise. */
  readonly reason: string | null;
  /** The instance name on the network (`name`, or `name (2)` when another took it); null when off. */
  readonly instance: string | null;
}

/** What the worker is given: the advertisement, and the interfaces to answer on (null: the one of `onlyAddress`). */
export interface WorkerData extends Advertisement {
  readonly interfaces: readonly string[] | null;
}
/** What the worker tells. */
export type WorkerNews =
  | { readonly type: 'advertising' }
  | { readonly type: 'renamed'; readonly instance: string }
  | { readonly type: 'hostname'; readonly hostname: string }
  | { readonly type: 'stopped'; readonly error?: string };
/** What the worker is told. */
export type WorkerOrder = { readonly type: 'stop' };

/** The first wait before a failed worker is started again; it doubles up to RETRY_MAX_MS. */
export const RETRY_FIRST_MS = 5_000;
export const RETRY_MAX_MS = 300_000;
/** How long a stop waits for the goodbye packets before ending the worker (it is said in the log when it is hit). */
export const GOODBYE_WAIT_MS = 5_000;
/** How often the set of interfaces is looked at (the library looks at their addresses as often). */
export const INTERFACE_POLL_MS = 15_000;
/** Longest line of the worker's output kept in the log. */
const MAX_LOG_LINE = 1000;

export interface AdvertiserDeps {
  readonly ad: Advertisement;
  readonly log: Logger;
  /** The worker's module (built code); tests of the built daemon use the default. */
  readonly workerUrl?: URL;
  /** The machine's interfaces now (`os.networkInterfaces` by default). */
  readonly networkInterfaces?: () => InterfaceMap;
  /** RETRY_FIRST_MS and INTERFACE_POLL_MS by default (tests shorten them). */
  readonly retryFirstMs?: number;
  readonly pollMs?: number;
}

export class MdnsAdvertiser {
  private worker: Worker | null = null;
  /** The interfaces the running worker answers on (joined), to log them. */
  private answeringOn = '';
  /** Those interfaces with their addresses (`addressesOn`), to see a change. */
  private addressesNow = '';
  private state: MdnsState = 'starting';
  private reason: string | null = null;
  private instance: string;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** A worker being replaced (its goodbye under way): the next starts once it is done. */
  private replacing: Promise<void> | null = null;

  constructor(private readonly deps: AdvertiserDeps) {
    this.instance = deps.ad.instance;
  }

  /** Starts advertising (the worker and the library load now), and watches the interfaces. */
  start(): void {
    if (this.stopped || this.pollTimer !== null) return;
    this.launch();
    this.pollTimer = setInterval(() => this.look(), this.deps.pollMs ?? INTERFACE_POLL_MS);
    this.pollTimer.unref();
  }

  status(): MdnsStatus {
    return { state: this.state, reason: this.reason, instance: this.state === 'off' ? null : this.instance };
  }

  /** Says goodbye on the network (records with TTL 0) and ends the worker; waits at most GOODBYE_WAIT_MS. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    const worker = this.worker;
    this.worker = null;
    this.state = 'off';
    this.reason = 'the daemon stopped';
    await this.replacing;
    if (worker) await goodbye(worker, this.deps.log);
  }

  private answering(): Answering & { readonly addresses: string } {
    const all = (this.deps.networkInterfaces ?? networkInterfaces)();
    const answering = answeringInterfaces(this.deps.ad, all);
    return { ...answering, addresses: addressesOn(this.deps.ad, answering.names, all) };
  }

  /** Starts a worker for the interfaces there are now; with none, waits for one (the poll starts it). */
  private launch(): void {
    if (this.stopped || this.worker !== null || this.replacing !== null) return;
    const { names, why, addresses } = this.answering();
    this.answeringOn = names.join(' ');
    this.addressesNow = addresses;
    // A fresh responder starts with the daemon's own name (the one before may have been renamed).
    this.instance = this.deps.ad.instance;
    if (why !== null) {
      this.state = 'off';
      this.reason = why;
      return;
    }
    this.state = this.failures > 0 ? 'retrying' : 'starting';
    const data: WorkerData = { ...this.deps.ad, interfaces: this.deps.ad.onlyAddress !== null ? null : names };
    // The worker's path goes through `../mdns/`: this code also runs bundled into dist/cli/main.js.
    const worker = new Worker(this.deps.workerUrl ?? new URL('../mdns/advertise-worker.js', import.meta.url), {
      workerData: data,
      stdout: true,
      stderr: true,
      // A responder holds a few records and sockets: a small heap is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 2 },
    });
    worker.unref();
    this.worker = worker;
    this.logLines(worker.stdout);
    this.logLines(worker.stderr);
    worker.on('message', (news: WorkerNews) => this.heard(worker, news));
    worker.on('error', (err: Error) => this.failed(worker, err.message));
    worker.on('exit', (code) => this.failed(worker, `its thread ended (exit code ${code})`));
  }

  /** The poll: an interface came or went, or an address changed (or the first one came up): advertise anew. */
  private look(): void {
    if (this.stopped || this.retryTimer !== null || this.replacing !== null) return;
    const { names, addresses } = this.answering();
    if (addresses === this.addressesNow) return;
    const old = this.worker;
    this.worker = null;
    this.deps.log.info({ interfaces: names, addresses }, 'the network interfaces or their addresses changed: advertising anew');
    if (!old) return this.launch();
    this.replacing = goodbye(old, this.deps.log).then(() => {
      this.replacing = null;
      this.launch();
    });
  }

  private heard(worker: Worker, news: WorkerNews): void {
    if (this.worker !== worker) return;
    if (news.type === 'advertising') {
      this.failures = 0;
      this.state = 'advertising';
      this.reason = null;
      this.deps.log.info(
        { instance: this.instance, port: this.deps.ad.port, interfaces: this.answeringOn },
        'advertised on the local network (mDNS, _tether._tcp)',
      );
    } else if (news.type === 'renamed') {
      this.instance = news.instance;
      this.deps.log.info({ instance: news.instance }, 'another device on the network has this name: advertised under a new one');
    } else if (news.type === 'hostname') {
      this.deps.log.info({ hostname: news.hostname }, 'the mDNS host name was taken on the network: another one is used');
    }
  }

  private failed(worker: Worker, why: string): void {
    if (this.worker !== worker) return; // stopped, replaced, or already counted (an error is followed by an exit)
    this.worker = null;
    void worker.terminate();
    this.failures++;
    const wait = Math.min(RETRY_MAX_MS, (this.deps.retryFirstMs ?? RETRY_FIRST_MS) * 2 ** (this.failures - 1));
    this.state = 'retrying';
    this.reason = `mDNS advertising failed (${why}); trying again in ${Math.round(wait / 1000)} s`;
    this.deps.log.warn({ err: why, retryInS: wait / 1000 }, 'mDNS advertising failed');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.launch();
    }, wait);
    this.retryTimer.unref();
  }

  /** The library's console output, line by line, into the log (never the daemon's stdout). */
  private logLines(stream: Readable): void {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line: string) => {
      if (line.trim() !== '') this.deps.log.warn({ mdns: line.slice(0, MAX_LOG_LINE) }, 'the mDNS responder said');
    });
  }
}

/** Tells a worker to say goodbye on the network, waits for it (at most GOODBYE_WAIT_MS), and ends it. */
async function goodbye(worker: Worker, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      log.warn({ waitedMs: GOODBYE_WAIT_MS }, 'the mDNS responder did not say it sent its goodbye in time: ended all the same');
      done();
    }, GOODBYE_WAIT_MS);
    worker.on('message', (news: WorkerNews) => news.type === 'stopped' && done());
    worker.once('exit', done);
    worker.postMessage({ type: 'stop' } satisfies WorkerOrder);
  });
  await worker.terminate();
}
