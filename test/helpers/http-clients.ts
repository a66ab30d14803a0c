/**
 * A request sent by the HTTP clients people use, each in its own process as it would run: Node's
 * own `fetch` (undici) and `curl`, both trusting exactly the given certificate for https. What
 * each answers is what its user would see: the status and the body, or the error it failed with.
 */
import { spawn } from 'node:child_process';

/** What a client saw: an answer, or the error it failed with (`EPIPE`, `ECONNRESET`...). */
export type ClientOutcome = { readonly status: number; readonly body: string } | { readonly error: string };

export interface ClientRequest {
  readonly url: string;
  readonly token: string;
  readonly contentType: string;
  /** The body, from this file. */
  readonly bodyFile: string;
  /** A PEM file with the one certificate to trust (https). */
  readonly caFile?: string;
}

/** Runs `file args` to its end, within `timeoutMs`: its exit code and output. */
function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not finish in ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/**
 * The script a fresh node runs: one fetch per entry of `SENDS`, one after the other (on the
 * connections its dispatcher keeps, as an app's would be), each body `declared` (a buffer, sent
 * with its Content-Length) or `chunked` (a stream); their outcomes printed as a JSON array.
 */
const FETCH_SCRIPT = `
import { readFileSync } from 'node:fs';
const { URL: url, TOKEN, CONTENT_TYPE, BODY_FILE, SENDS } = process.env;
const data = readFileSync(BODY_FILE);
const bodyOf = (send) => send === 'chunked'
  ? new ReadableStream({ start(c) { for (let o = 0; o < data.length; o += 65536) c.enqueue(data.subarray(o, o + 65536)); c.close(); } })
  : data;
const outcomes = [];
for (const send of SENDS.split(',')) {
  try {
    const res = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer ' + TOKEN, 'content-type': CONTENT_TYPE }, body: bodyOf(send), duplex: 'half' });
    outcomes.push({ status: res.status, body: await res.text() });
  } catch (e) {
    outcomes.push({ error: String(e.cause?.code ?? e.cause?.message ?? e.message) });
  }
}
console.log(JSON.stringify(outcomes));
`;

/** How a body is sent: with its length declared, or chunked (a stream). */
export type BodySend = 'declared' | 'chunked';

/** POSTs with Node's own fetch, one per entry of `sends`, in a node of its own (its certificate trust is set at start). */
export async function nodeFetch(req: ClientRequest, sends: readonly BodySend[], timeoutMs = 60_000): Promise<ClientOutcome[]> {
  const env = {
    ...process.env,
    URL: req.url,
    TOKEN: req.token,
    CONTENT_TYPE: req.contentType,
    BODY_FILE: req.bodyFile,
    SENDS: sends.join(','),
    ...(req.caFile ? { NODE_EXTRA_CA_CERTS: req.caFile } : {}),
  };
  const { out, err } = await run(process.execPath, ['--input-type=module', '-e', FETCH_SCRIPT], env, timeoutMs);
  const line = out.trim().split('\n').pop() ?? '';
  if (!line.startsWith('[')) throw new Error(`node's fetch printed no outcome: ${out}${err}`);
  return JSON.parse(line) as ClientOutcome[];
}

const STATUS_MARK = '\n--status ';

/** One POST with curl (as a person runs it: its defaults, `Expect: 100-continue` included). */
export async function curlPost(req: ClientRequest, timeoutMs = 60_000): Promise<ClientOutcome> {
  const args = [
    '--silent',
    '--show-error',
    '--header',
    `authorization: Bearer ${req.token}`,
    '--header',
    `content-type: ${req.contentType}`,
    '--data-binary',
    `@${req.bodyFile}`,
    '--write-out',
    `${STATUS_MARK}%{http_code}`,
    ...(req.caFile ? ['--cacert', req.caFile] : []),
    req.url,
  ];
  const { code, out, err } = await run('curl', args, process.env, timeoutMs);
  const at = out.lastIndexOf(STATUS_MARK);
  if (code !== 0 || at < 0) return { error: `curl exited ${code}: ${err.trim()}` };
  return { status: Number(out.slice(at + STATUS_MARK.length)), body: out.slice(0, at) };
}
