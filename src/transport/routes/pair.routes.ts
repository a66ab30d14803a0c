/**
 * Pairing and device registration over HTTP (docs/pairing.md):
 * `POST /pair` exchanges a pairing token for a permanent one (the one route authenticated by
 * the pairing token in its body, not a bearer token; at most 10 attempts a minute per address),
 * `PUT /device` lets a paired client register its device again (after a 410 removed it, or
 * with a new device token), and `PUT` / `DELETE /device/live-activity` give and take back its
 * Live Activity tokens (docs/push.md "Live Activity").
 *
 * Invariant: a refused pairing says only "unauthorized" (wrong, used and expired look alike to
 * the caller) and changes nothing; the limit counts every attempt, good or bad.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PairRequest, PairResult } from '../../auth/pairing.js';
import { DomainError } from '../../errors.js';
import type { DeviceFields } from '../../machines/device.machine.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

/** Attempts of `POST /pair` per address and minute. */
export const PAIR_ATTEMPTS_PER_MINUTE = 10;
const { PairBody, PairAnswer, DeviceBody, DeviceAnswer, LiveActivityBody, LiveActivityAnswer } = RouteSchemas;

/** What the routes ask of the pairing service (src/auth/pairing.ts is one). */
export interface PairingHandle {
  /** The exchange; null when the pairing token is wrong, used or expired. */
  pair(req: PairRequest): PairResult | null;
  registerDevice(tokenId: string, fields: DeviceFields): void;
  /** Stores the Live Activity tokens given; answers which the device holds now. */
  setLiveActivity(
    tokenId: string,
    tokens: { pushToStartToken?: string; updateToken?: string },
  ): { pushToStartToken: string | null; updateToken: string | null };
  /** Forgets both Live Activity tokens (a running activity ends). */
  forgetLiveActivity(tokenId: string): void;
}

export interface PairRoutesOptions {
  readonly pairing: PairingHandle;
  /** The daemon's id and name, given in the answer (docs/pairing.md "Which daemon is which"). */
  readonly daemon: { readonly id: string; readonly name: string };
}

export const pairRoutes: FastifyPluginAsyncTypebox<PairRoutesOptions> = async (app, { pairing, daemon }) => {
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
      return reply.code(201).send({ ...result, daemon: { id: daemon.id, name: daemon.name } });
    },
  );
  app.put('/device', { schema: { body: DeviceBody, response: { 200: DeviceAnswer } } }, (req) => {
    const tokenId = req.tetherToken?.id;
    if (tokenId === undefined) throw new DomainError('unauthorized', 'a valid token is required');
    pairing.registerDevice(tokenId, req.body);
    return { tokenId, deviceName: req.body.deviceName, environment: req.body.environment, state: 'registered' as const };
  });
  app.put('/device/live-activity', { schema: { body: LiveActivityBody, response: { 200: LiveActivityAnswer } } }, (req) => {
    const tokenId = req.tetherToken?.id;
    if (tokenId === undefined) throw new DomainError('unauthorized', 'a valid token is required');
    const held = pairing.setLiveActivity(tokenId, req.body);
    return { tokenId, pushToStartToken: held.pushToStartToken !== null, updateToken: held.updateToken !== null };
  });
  app.delete('/device/live-activity', { schema: { response: { 200: LiveActivityAnswer } } }, (req) => {
    const tokenId = req.tetherToken?.id;
    if (tokenId === undefined) throw new DomainError('unauthorized', 'a valid token is required');
    pairing.forgetLiveActivity(tokenId);
    return { tokenId, pushToStartToken: false, updateToken: false };
  });
};
