/**
 * Pairs a device with a test's daemon the way the app does: a pairing token from
 * `tether pair --json`, then `POST /pair` with it and the device's push token.
 */
import { expect } from 'vitest';
import type { DaemonFixture } from './daemon-fixture.js';
import { runCli } from './daemon.js';

export interface PairedDevice {
  /** The bearer token the daemon gave the device. */
  readonly token: string;
  readonly tokenId: string;
}

/** Pairs `deviceName` with APNs token `deviceToken` in `environment` (a debug build: sandbox). */
export async function pairDevice(fx: DaemonFixture, deviceName: string, deviceToken: string, environment: string): Promise<PairedDevice> {
  const p = JSON.parse((await runCli(['pair', '--json'], fx.home.env)).stdout) as { pairingToken: string };
  const r = await fetch(`${fx.d.base}/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pairingToken: p.pairingToken, deviceName, deviceToken, environment }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as PairedDevice;
}
