/**
 * The APNs stand-ins (testkit/apns-server.ts) for the tests of a `describe`: the key and both
 * HTTP/2 TLS endpoints in a temp folder, started before those tests, closed and removed after.
 * Call it before `useDaemon`: the config names their URLs, and vitest runs `afterAll` hooks in
 * reverse order, so the stand-ins outlive the daemon that pushes to them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startApnsStandIns, TEST_KEY_ID, TEST_TEAM_ID, type ApnsStandIns, type FakeApns } from '../../testkit/apns-server.js';

export interface ApnsFixture {
  readonly apns: ApnsStandIns;
  /** The stand-ins' parts, for short: `apns.sandbox`, and so on. */
  readonly sandbox: FakeApns;
  readonly production: FakeApns;
  readonly keyPath: string;
  readonly caFile: string;
}

/** `prefix` names the temp folder (`tether-<what>-`); `ids` are the token ids the stand-ins accept. */
export function useApnsStandIns(prefix: string, ids = { teamId: TEST_TEAM_ID, keyId: TEST_KEY_ID }): ApnsFixture {
  let dir: string | null = null;
  let apns: ApnsStandIns | null = null;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    apns = await startApnsStandIns(dir, ids);
  });
  afterAll(async () => {
    await apns?.close();
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  });
  const fx: ApnsFixture = {
    get apns() {
      if (apns === null) throw new Error('the APNs stand-ins are used before their beforeAll ran');
      return apns;
    },
    get sandbox() {
      return fx.apns.sandbox;
    },
    get production() {
      return fx.apns.production;
    },
    get keyPath() {
      return fx.apns.keyPath;
    },
    get caFile() {
      return fx.apns.caFile;
    },
  };
  return fx;
}
