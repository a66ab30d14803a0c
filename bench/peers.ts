/**
 * Peer terminal servers measured side by side with tether (issue: VibeTunnel, wetty, ttyd),
 * each attached to the same tmux session with `tmux attach`. Not measured yet: a peer is listed
 * here with why, and is never faked. A peer bench adds its runs to flood, echo and reconnect
 * with the same harness (bench/harness.ts) and reports against the same baselines.
 */
export interface PeerStatus {
  readonly name: string;
  /** What happened to it in this run ("not measured: ..." until its bench exists). */
  readonly status: string;
}

export const PEERS: readonly PeerStatus[] = [
  { name: 'VibeTunnel (npm vibetunnel)', status: 'not measured yet (no peer bench; needs libpam0g-dev for its native addon)' },
  { name: 'wetty (npm wetty)', status: 'not measured yet (no peer bench)' },
  { name: 'ttyd (Debian package, if any)', status: 'not measured yet (no peer bench)' },
];
