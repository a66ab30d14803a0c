/**
 * The warnings of a daemon's start, for `/health` and the log (docs/configuration.md): the
 * config's own, and plain HTTP on an address other machines reach.
 */
import type { Logger } from '../log.js';
import { isLoopback } from './schema.js';

/**
 * The start's warnings for `/health` and the log: the config's own, and plain HTTP on an address
 * other machines reach.
 */
export function startWarnings(configWarnings: readonly string[], tls: boolean, host: string, configFile: string, log: Logger): string[] {
  const plainHttp = plainHttpWarning(tls, host, configFile);
  const warnings = plainHttp === null ? [...configWarnings] : [...configWarnings, plainHttp];
  for (const w of warnings) log.warn(w);
  return warnings;
}

/** The warning for plain HTTP on an address other machines reach, or null when there is none to give. */
export function plainHttpWarning(tls: boolean, host: string, configFile: string): string | null {
  if (tls || isLoopback(host)) return null;
  return `tls = false while bound to ${host}: tokens cross the network in the clear unless a TLS reverse proxy is in front (set tls = true in ${configFile})`;
}
