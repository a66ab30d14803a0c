/**
 * A phone on a test network (netns.ts): programs run in the "lan" namespace, as a phone on the
 * same network as the machine would run them. `browseMdns` is a real mDNS browser
 * (bonjour-service's, another implementation than the daemon's responder) that reports every
 * `_tether._tcp` service it sees, as JSON lines; `phoneRequest` makes one HTTPS request the way
 * the app does, pinning the certificate's fingerprint first (the reference client, built).
 *
 * Only the processes started here are ever signalled, by their own pid.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './daemon.js';

/** A `_tether._tcp` service as the browser saw it. */
export interface SeenService {
  /** `up` (found or seen again), `down` (its goodbye), or `error` (the browser's own failure). */
  readonly ev: 'up' | 'down' | 'error';
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly addresses: readonly string[];
  readonly txt: Readonly<Record<string, string>>;
  /** The TXT record's strings as they came over the wire (`key=value`). */
  readonly rawTxt: readonly string[];
  readonly message?: string;
}

/**
 * The browser: it asks for `_tether._tcp` at once and then every second (as an app does while its
 * list of machines is open). With `fresh`, each ask is a new browser with nothing cached, so every
 * answer is reported, with the records the responder gives now.
 */
const BROWSER = `
import { createRequire } from 'node:module';
const { Bonjour } = createRequire(${JSON.stringify(pathToFileURL(join(ROOT, 'package.json')).href)})('bonjour-service');
const [iface, mode] = process.argv.slice(2);
const say = (ev, s) => console.log(JSON.stringify({ ev, name: s.name, host: s.host, port: s.port,
  addresses: s.addresses ?? [], txt: s.txt ?? {}, rawTxt: (s.rawTxt ?? []).map((b) => Buffer.from(b).toString('utf8')) }));
// The interface the phone is on: the lan namespace has no route to the multicast group otherwise.
const bonjour = new Bonjour({ interface: iface, bind: '0.0.0.0' }, (err) => console.log(JSON.stringify({ ev: 'error', message: err.message })));
let browser = null;
const ask = () => {
  if (browser && mode !== 'fresh') return browser.update();
  browser?.stop();
  browser = bonjour.find({ type: 'tether' });
  browser.on('up', (s) => say('up', s));
  browser.on('down', (s) => say('down', s));
};
ask();
setInterval(ask, 1000);
process.on('SIGTERM', () => bonjour.destroy(() => process.exit(0)));
`;

export interface MdnsBrowser {
  /** Everything seen so far, in order. */
  readonly seen: readonly SeenService[];
  /** Waits for a report that `match` accepts (also one seen before the call), at most `timeoutMs`. */
  waitFor(match: (s: SeenService) => boolean, what: string, timeoutMs?: number): Promise<SeenService>;
  /** Ends the browser (its process, by pid). */
  stop(): Promise<void>;
}

/** Starts a browser in the namespace `wrap` runs in, on the interface whose address is `iface`. */
export function browseMdns(wrap: readonly string[], dir: string, iface: string, mode: 'watch' | 'fresh' = 'watch'): MdnsBrowser {
  const script = join(dir, 'mdns-browser.mjs');
  writeFileSync(script, BROWSER);
  const child: ChildProcessWithoutNullStreams = spawn(wrap[0]!, [...wrap.slice(1), process.execPath, script, iface, mode], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const seen: SeenService[] = [];
  const waiters = new Set<() => void>();
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.trim() === '') continue;
      seen.push(JSON.parse(line) as SeenService);
      for (const w of waiters) w();
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    seen,
    waitFor: (match, what, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = seen.find(match);
          if (!hit) return;
          done();
          resolve(hit);
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`the mDNS browser did not see ${what} in ${timeoutMs} ms; it saw ${JSON.stringify(seen.slice(-5))}; stderr: ${err}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** One HTTPS request from the phone: the certificate pinned first, then the request (with the token, if any). */
const PHONE = `
import https from 'node:https';
import { pinnedTlsOptions } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/reference-client/pinning.js')).href)};
const { host, port, fp, method, path, token, body } = JSON.parse(process.argv[2]);
try {
  const tls = await pinnedTlsOptions(host, port, fp, 10000);
  const res = await new Promise((resolve, reject) => {
    const headers = { ...(token ? { authorization: 'Bearer ' + token } : {}), ...(body ? { 'content-type': 'application/json' } : {}) };
    const req = https.request({ host, port, path, method, ...tls, headers }, (r) => {
      let text = '';
      r.on('data', (d) => (text += d));
      r.on('end', () => resolve({ status: r.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
  console.log(JSON.stringify({ ok: true, ...res }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, code: err.code ?? null, message: err.message }));
}
`;

export interface PhoneRequest {
  readonly host: string;
  readonly port: number;
  /** The fingerprint the phone pinned. */
  readonly fp: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly token?: string;
  readonly body?: unknown;
}

/** The answer: `ok` with `status` and `text`, or not ok with the error's `code` (a refused pin: the handshake failed). */
export type PhoneAnswer = { ok: true; status: number; text: string } | { ok: false; code: string | null; message: string };

export function phoneRequest(wrap: readonly string[], dir: string, request: PhoneRequest): Promise<PhoneAnswer> {
  const script = join(dir, 'phone-request.mjs');
  writeFileSync(script, PHONE);
  return runNodeJson<PhoneAnswer>(wrap, script, [JSON.stringify(request)], "the phone's request");
}

/** Runs `node <script> ...args` under `wrap` (in a namespace); resolves with the one JSON value it prints (`what` names it in an error). */
export function runNodeJson<T>(wrap: readonly string[], script: string, args: readonly string[], what = `node ${script}`): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(wrap[0]!, [...wrap.slice(1), process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`${what} exited with ${code}: ${out} ${err}`));
      }
    });
  });
}
