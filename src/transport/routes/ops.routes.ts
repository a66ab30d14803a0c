/**
 * The operator view (docs/operations.md): `GET /ops` (the page), `GET /ops/charts/:machine.svg`
 * (the generated statecharts, served from this package's docs/statecharts, never from the
 * internet), `GET /ops/actors` (the actor tree as JSON, for `tether status`) and the WebSocket
 * `/ops/events` (the tree, then what changes, fed by XState inspection). All behind the token.
 *
 * Invariant: a viewer never slows the stream: its batches are sent only while its socket's send
 * buffer is under OPS_HIGH_WATERMARK_BYTES; otherwise the inspector keeps coalescing for it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { WebSocket } from 'ws';
import { DomainError } from '../../errors.js';
import type { OpsActorView, OpsSink } from '../../ops/inspector.js';
import type { ConnectionRegistry } from '../stream/connections.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

/** A viewer's socket with more than this unsent is behind: it is skipped until it drains. */
export const OPS_HIGH_WATERMARK_BYTES = 256 * 1024;

/** Where the generated charts are, in the source tree and in the installed package alike. */
export const CHARTS_DIR = fileURLToPath(new URL('../../docs/statecharts/', import.meta.url));

/** What the ops routes need of the actor system. */
export interface OpsHandle {
  actors(): readonly OpsActorView[];
  watch(sink: OpsSink): () => void;
}

export interface OpsRoutesOptions {
  readonly ops: OpsHandle;
  /** Viewers are registered here, so revoking their token closes them (4401) like any socket. */
  readonly connections?: ConnectionRegistry;
  /** Default CHARTS_DIR. */
  readonly chartsDir?: string;
}

/** The charts, read once: name -> SVG text. A missing directory means no charts, not a crash. */
function loadCharts(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.svg'));
  } catch {
    return out;
  }
  for (const n of names) out.set(n, readFileSync(`${dir}/${n}`, 'utf8'));
  return out;
}

function watchOver(socket: WebSocket, ops: OpsHandle, connections: ConnectionRegistry | undefined, tokenId: string): void {
  const unregister = connections?.add({ tokenId, sessionId: '', kind: 'ops', close: (code, reason) => socket.close(code, reason) });
  const stop = ops.watch({
    behind: () => socket.bufferedAmount > OPS_HIGH_WATERMARK_BYTES,
    send: (batch) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(batch));
    },
  });
  socket.on('close', () => {
    stop();
    unregister?.();
  });
  // Viewers only listen.
  socket.on('message', () => undefined);
}

/** Registers the ops routes (behind auth: register after the auth plugin). */
export const opsRoutes: FastifyPluginCallbackTypebox<OpsRoutesOptions> = (app, opts, done) => {
  // The page and the charts are read when first asked for: most daemons never show them.
  let charts: Map<string, string> | null = null;
  app.get('/ops', async (_req, reply) => {
    const { OPS_PAGE_CSP, OPS_PAGE_HTML } = await import('./ops.page.js');
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', OPS_PAGE_CSP)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .send(OPS_PAGE_HTML);
  });
  app.get('/ops/charts/:name', { schema: { params: RouteSchemas.ChartParams } }, (req, reply) => {
    charts ??= loadCharts(opts.chartsDir ?? CHARTS_DIR);
    const svg = charts.get(req.params.name);
    if (svg === undefined) throw new DomainError('not-found', `no chart named ${req.params.name}`);
    return reply.header('content-type', 'image/svg+xml; charset=utf-8').header('cache-control', 'no-cache').send(svg);
  });
  app.get('/ops/actors', () => ({ actors: opts.ops.actors() }));
  app.get('/ops/events', { websocket: true }, (socket, req) =>
    watchOver(socket, opts.ops, opts.connections, req.tetherToken?.id ?? 'unknown'),
  );
  done();
};
