/**
 * Pairing and device registration over HTTP (docs/pairing.md):
 * `POST /pair` exchanges a pairing token for a permanent one (the one route authenticated by
 * the pairing token in its body, not a bearer token; at most 10 attempts a minute per address),
 * and `PUT /device` lets a paired client register its device again (after a 410 removed it, or
 * with a new device token).
 *
 * Invariant: a refused pairing says only "unauthorized" (wrong, used and expired look alike to
 * the caller) and changes nothing; the limit counts every attempt, good or bad.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PairRequest, PairResult } from '../auth/pairing.js';
import { DomainError } from '../errors.js';
import type { DeviceFields } from '../machines/device.machine.js';

/** Attempts of `POST /pair` per address and minute. */
export const PAIR_ATTEMPTS_PER_MINUTE = 10;
/** A device name: printable, 1 to 64 characters (it names the token). */
const DEVICE_NAME = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$' });
/** An APNs device token: hex. */
const DEVICE_TOKEN = Type.String({ pattern: '^[0-9A-Fa-f]{8,200}$' });
const ENVIRONMENT = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);

const PairBody = Type.Object(
  {
    pairingToken: Type.String({ minLength: 1, maxLength: 256 }),
    deviceName: DEVICE_NAME,
    deviceToken: Type.Optional(DEVICE_TOKEN),
    environment: Type.Optional(ENVIRONMENT),
  },
  { additionalProperties: false },
);
const PairAnswer = Type.Object({ token: Type.String(), tokenId: Type.String(), name: Type.String() });
const DeviceBody = Type.Object(
  { deviceToken: DEVICE_TOKEN, environment: ENVIRONMENT, deviceName: DEVICE_NAME },
  { additionalProperties: false },
);
const DeviceAnswer = Type.Object({
  tokenId: Type.String(),
  deviceName: Type.String(),
  environment: ENVIRONMENT,
  state: Type.Literal('registered'),
});

/** What the routes ask of the pairing service (src/auth/pairing.ts is one). */
export interface PairingHandle {
  /** The exchange; null when the pairing token is wrong, used or expired. */
  pair(req: PairRequest): PairResult | null;
  registerDevice(tokenId: string, fields: DeviceFields): void;
}

export interface PairRoutesOptions {
  readonly pairing: PairingHandle;
}

export const pairRoutes: FastifyPluginAsyncTypebox<PairRoutesOptions> = async (app, { pairing }) => {
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_req, ctx) =>
      new DomainError(
        'rate-limited',
        `too many pairing attempts from this address: at most ${ctx.max} a minute, try again in ${Math.ceil(ctx.ttl / 1000)} s`,
      ),
  });
  app.post(
    '/pair',
    {
      config: { auth: 'none', rateLimit: { max: PAIR_ATTEMPTS_PER_MINUTE, timeWindow: 60_000 } },
      schema: { body: PairBody, response: { 201: PairAnswer } },
    },
    async (req, reply) => {
      const body = req.body;
      if (body.deviceToken !== undefined && body.environment === undefined) {
        throw new DomainError('invalid', 'body.environment is required with body.deviceToken ("sandbox" or "production")');
      }
      if (body.deviceToken === undefined && body.environment !== undefined) {
        throw new DomainError('invalid', 'body.environment is only taken with body.deviceToken');
      }
      const result = pairing.pair(body);
      if (!result) throw new DomainError('unauthorized', 'the pairing token is wrong, used or expired: run "tether pair" for a new one');
      req.log.info({ tokenId: result.tokenId, name: result.name, device: body.deviceToken !== undefined }, 'device paired');
      return reply.code(201).send(result);
    },
  );
  app.put('/device', { schema: { body: DeviceBody, response: { 200: DeviceAnswer } } }, (req) => {
    const tokenId = req.tetherToken?.id;
    if (tokenId === undefined) throw new DomainError('unauthorized', 'a valid token is required');
    pairing.registerDevice(tokenId, req.body);
    return { tokenId, deviceName: req.body.deviceName, environment: req.body.environment, state: 'registered' as const };
  });
};
