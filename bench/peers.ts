/**
 * Peer terminal servers measured side by side with tether (issue: VibeTunnel, wetty, ttyd),
 * each attached to the same tmux session with `tmux attach` (bench/wetty.bench.ts,
 * bench/vibetunnel.bench.ts; installed into bench/peers on first use). A peer that cannot be
 * installed or started is listed with why, never faked. `BENCH_PEERS=0` leaves them out.
 */
export interface PeerStatus {
  readonly name: string;
  /** What happened to it in this run ("not measured: ..." until its bench exists). */
  readonly status: string;
}

export const PEERS: readonly PeerStatus[] = [
  { name: 'VibeTunnel (npm vibetunnel 1.0.0-beta.15.1)', status: 'measured: see the "peer VibeTunnel" rows (bench/vibetunnel.bench.ts)' },
  { name: 'wetty (npm wetty 3.2.0)', status: 'measured: see the "peer wetty" rows (bench/wetty.bench.ts)' },
  {
    name: 'ttyd (Debian package, if any)',
    status: 'skipped: Debian has no ttyd package candidate on this machine (apt-cache policy ttyd), and no peer is built from source',
  },
];
