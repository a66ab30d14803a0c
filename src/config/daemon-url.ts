/**
 * The daemon's addresses (docs/configuration.md "Start-up"): its own (the run file's) and the URL
 * line it prints with the local token. `publicBaseUrl` when set (a tunnel), else the bound address.
 */
import type { TetherConfig } from './schema.js';

/** The URL line: the daemon's address (`daemonUrl`) with the token. */
export function startupUrl(config: TetherConfig, scheme: 'http' | 'https', host: string, port: number, token: string): string {
  return `${daemonUrl(config, scheme, host, port)}?token=${encodeURIComponent(token)}`;
}

/** The daemon's own address (the run file's): publicBaseUrl when set, else the bound address. */
export function daemonUrl(config: TetherConfig, scheme: 'http' | 'https', host: string, port: number): string {
  if (config.publicBaseUrl !== '') return `${config.publicBaseUrl.replace(/\/+$/, '')}/`;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown}:${port}/`;
}
