/**
 * What tether says about itself on the local network (docs/pairing.md "Finding the daemon
 * again"): one DNS-SD service of type `_tether._tcp` on the bound port, its instance named after
 * the machine, and TXT records a phone checks against what it paired with: the daemon's id, its
 * name, its tether version and its certificate's fingerprint. Pure: what is said, not how.
 *
 * Invariant: nothing secret is ever in it (no token, no pairing token): the TXT holds only the
 * keys of `MdnsTxt`, and anyone on the network may read them.
 */

/** The DNS-SD service type, without the leading underscore and protocol (`_tether._tcp`). */
export const MDNS_SERVICE_TYPE = 'tether';
/**
 * Longest instance name, in UTF-8 bytes: a DNS label holds 63, and a name taken on the network
 * gets ` (2)` appended (RFC 6763 and the library do that), so a few bytes stay free for it.
 */
export const MAX_INSTANCE_BYTES = 56;

/** The TXT record: the daemon's id and name, tether's version, the certificate fingerprint. */
export interface MdnsTxt {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  /** SHA-256 of the certificate's DER, 64 lowercase hex digits: what a paired phone pinned. */
  readonly fp: string;
}

/** Everything the advertising worker needs (it is handed over as worker data: plain values only). */
export interface Advertisement {
  /** The instance name people see in a browser; the network may make it `name (2)`. */
  readonly instance: string;
  /** The host name the service points to (`<hostname>.local`): tether's own, so it never takes the machine's. */
  readonly hostname: string;
  readonly port: number;
  readonly txt: MdnsTxt;
  /** The one address the daemon listens on, or null when it listens on every interface. */
  readonly onlyAddress: string | null;
  /** Whether AAAA records are given (the daemon listens on IPv6 too). */
  readonly ipv6: boolean;
}

/** `text` cut to at most `max` UTF-8 bytes, never in the middle of a character. */
export function cutUtf8(text: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > max) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/**
 * The advertisement of a daemon named `name` (config `name` or the host name) with the id `id`,
 * listening on `address:port`. The instance name is the daemon's name with dots made dashes (a
 * dot separates labels), cut to MAX_INSTANCE_BYTES; the host name is `tether-` and the first 12
 * characters of the id in lower case, a name no other responder on the machine uses.
 */
export function advertisementOf(opts: {
  id: string;
  name: string;
  version: string;
  fingerprint: string;
  address: string;
  port: number;
}): Advertisement {
  const wildcard = opts.address === '0.0.0.0' || opts.address === '::';
  const instance = cutUtf8(opts.name.replace(/\./g, '-').trim(), MAX_INSTANCE_BYTES) || 'tether';
  const hostname = `tether-${opts.id
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 12)
    .toLowerCase()}`;
  return {
    instance,
    hostname,
    port: opts.port,
    txt: { id: opts.id, name: opts.name, version: opts.version, fp: opts.fingerprint },
    onlyAddress: wildcard ? null : opts.address,
    ipv6: opts.address === '::' || opts.address.includes(':'),
  };
}
