/**
 * A real HTTP/2 TLS server standing in for APNs (both endpoints can be one of these): it
 * checks each request the way APNs does (method, path, the provider token's ES256 signature
 * against the public key, its `kid`/`iss`), records it, and answers what the test asks; and
 * the pair of them a pushing test starts, one per APNs environment, with the key they accept.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer, type IncomingHttpHeaders, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { generate } from 'selfsigned';

export interface ApnsRequest {
  readonly path: string;
  readonly deviceToken: string;
  readonly headers: IncomingHttpHeaders;
  readonly jwt: string;
  readonly jwtHeader: { alg?: string; kid?: string };
  readonly claims: { iss?: string; iat?: number };
  /** Null when the signature checked out; else why not. */
  readonly jwtError: string | null;
  readonly body: Buffer;
  readonly payload: unknown;
}

export type ApnsAnswer = { status: number; reason?: string };

export interface FakeApns {
  readonly url: string;
  /** The server's certificate (PEM): what a client must trust. */
  readonly certPem: string;
  readonly certFile: string;
  readonly requests: ApnsRequest[];
  /** How to answer each request (default: 200). */
  answer: (req: ApnsRequest) => ApnsAnswer;
  close(): Promise<void>;
}

/** An APNs key pair: the `.p8` file tether reads, and the public key APNs would hold. */
export function apnsKey(dir: string): { keyPath: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyPath = join(dir, 'AuthKey_TEST.p8');
  writeFileSync(keyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  return { keyPath, publicKey };
}

export async function startFakeApns(
  dir: string,
  name: string,
  publicKey: KeyObject,
  expect: { teamId: string; keyId: string },
): Promise<FakeApns> {
  const pems = await generate([{ name: 'commonName', value: `fake-apns-${name}` }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const certFile = join(dir, `${name}-cert.pem`);
  writeFileSync(certFile, pems.cert);
  const requests: ApnsRequest[] = [];
  const server: Http2SecureServer = createSecureServer({ key: pems.private, cert: pems.cert });
  const fake: FakeApns = {
    url: '',
    certPem: pems.cert,
    certFile,
    requests,
    answer: () => ({ status: 200 }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open client sessions would hold close() open, and so would a connection still in its
        // TLS handshake (a client connecting again as the stand-in closes): every socket goes.
        for (const s of sessions) s.destroy();
        for (const socket of sockets) socket.destroy();
      }),
  };
  const sessions = new Set<ServerHttp2Session>();
  const sockets = new Set<Socket>();
  // A daemon stopped or killed while its connection is open resets it (ECONNRESET on the read):
  // the client's doing, told to the stand-in as an error on its socket, session or stream, which
  // it ignores. Unheard, it would be an uncaught exception in the process that runs the stand-in.
  const ignore = (): void => undefined;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', ignore);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('session', (s) => {
    sessions.add(s);
    s.on('error', ignore);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', ignore);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      // A stream ended by its connection's reset is no request: APNs answers and counts none.
      if (stream.aborted || stream.destroyed) return;
      void (async () => {
        const path = String(headers[':path'] ?? '');
        const auth = String(headers.authorization ?? '');
        const jwt = auth.startsWith('bearer ') ? auth.slice(7) : '';
        let jwtError: string | null = null;
        let claims: ApnsRequest['claims'] = {};
        let jwtHeader: ApnsRequest['jwtHeader'] = {};
        try {
          jwtHeader = decodeProtectedHeader(jwt);
          const verified = await jwtVerify(jwt, publicKey, { algorithms: ['ES256'], issuer: expect.teamId });
          claims = verified.payload;
          if (jwtHeader.kid !== expect.keyId) jwtError = `kid ${String(jwtHeader.kid)}`;
        } catch (err) {
          jwtError = String(err);
        }
        const body = Buffer.concat(chunks);
        let payload: unknown;
        try {
          payload = JSON.parse(body.toString('utf8'));
        } catch {
          payload = null;
        }
        const req: ApnsRequest = {
          path,
          deviceToken: decodeURIComponent(path.replace(/^\/3\/device\//, '')),
          headers,
          jwt,
          jwtHeader,
          claims,
          jwtError,
          body,
          payload,
        };
        requests.push(req);
        const a: ApnsAnswer =
          headers[':method'] !== 'POST' || !path.startsWith('/3/device/')
            ? { status: 405, reason: 'MethodNotAllowed' }
            : jwtError
              ? { status: 403, reason: 'InvalidProviderToken' }
              : fake.answer(req);
        if (stream.destroyed) return; // reset while the token was checked: nobody to answer
        stream.respond({ ':status': a.status, 'apns-id': `id-${requests.length}` });
        stream.end(a.reason !== undefined ? JSON.stringify({ reason: a.reason }) : undefined);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (fake as { url: string }).url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** The team and key ids the tests' push config and fake APNs agree on. */
export const TEST_TEAM_ID = 'TEAM123456';
export const TEST_KEY_ID = 'KEY1234567';

/** The stand-ins a pushing test needs: APNs' two endpoints, taking tokens signed with one key. */
export interface ApnsStandIns {
  /** The key tether signs with (`[push] key_path`). */
  readonly keyPath: string;
  readonly sandbox: FakeApns;
  readonly production: FakeApns;
  /** Both servers' certificates in one file: what the daemon must trust (NODE_EXTRA_CA_CERTS). */
  readonly caFile: string;
  close(): Promise<void>;
}

/** Makes the key and starts both stand-ins, their files in `dir`; they check the tokens' ids against `ids`. */
export async function startApnsStandIns(dir: string, ids = { teamId: TEST_TEAM_ID, keyId: TEST_KEY_ID }): Promise<ApnsStandIns> {
  const key = apnsKey(dir);
  const sandbox = await startFakeApns(dir, 'sandbox', key.publicKey, ids);
  const production = await startFakeApns(dir, 'production', key.publicKey, ids);
  const caFile = join(dir, 'apns-ca.pem');
  writeFileSync(caFile, `${sandbox.certPem}\n${production.certPem}`);
  return {
    keyPath: key.keyPath,
    sandbox,
    production,
    caFile,
    close: async () => {
      await sandbox.close();
      await production.close();
    },
  };
}

/**
 * The `[push]` table of a daemon that pushes to the fake APNs at `url` (and its production pushes
 * to `productionUrl`, the same server unless given) with the key at `keyPath`.
 */
export function pushToml(url: string, keyPath: string, productionUrl = url): string[] {
  return [
    '[push]',
    `team_id = "${TEST_TEAM_ID}"`,
    `key_id = "${TEST_KEY_ID}"`,
    `key_path = ${JSON.stringify(keyPath)}`,
    'bundle_id = "dev.tether.app"',
    `sandbox_url = "${url}"`,
    `production_url = "${productionUrl}"`,
  ];
}
