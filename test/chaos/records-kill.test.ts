/**
 * A session record survives a SIGKILL of its writer at any moment: a process rewrites records
 * as fast as it can (descriptions and sizes changing every time) and is killed at random
 * moments; after each kill every record reads back whole, old or new, never a part.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRecords } from '../../src/restore/records.js';
import { eventually } from '../helpers/tmux.js';

const BUILT = fileURLToPath(new URL('../../dist/restore/records.js', import.meta.url));

const WRITER = `
import { SessionRecords } from ${JSON.stringify(BUILT)};
const records = new SessionRecords(process.argv[2]);
let i = 0;
process.stdout.write('ready\\n');
for (;;) {
  i++;
  for (const name of ['pi-main', 'web-2', 'api-3']) {
    records.write({
      v: 1, name, description: 'turn ' + i + ' '.padEnd(i % 3000, 'x'), cwd: '/srv/' + name, command: ['pi', '--tether'],
      sessionFile: '/home/me/.pi/sessions/' + name + '-' + i + '.jsonl', createdAt: '2026-11-25T10:00:00.000Z',
      reservedSeq: i * 1000, server: { pid: 4242, startTime: 1764000000 }, ended: null,
    });
  }
}
`;

describe('session records under SIGKILL', () => {
  let dir: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tether-records-kill-'));
    script = join(dir, 'writer.mjs');
    writeFileSync(script, WRITER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every record reads back whole after a kill at a random moment (25 kills)', async () => {
    const dataDir = join(dir, 'data');
    const records = new SessionRecords(dataDir);
    let lastSeen = 0;
    for (let k = 0; k < 25; k++) {
      const child = spawn(process.execPath, [script, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await eventually(() => out.includes('ready'), 15_000, 5, 'the writer started');
      // The first writer has written each record once: there is something to break.
      if (k === 0) await eventually(() => records.list().records.length === 3, 15_000, 5, 'the first writer to write all three records');
      // Let it write for a while, a different while each time, then kill it mid-stride.
      const until = Date.now() + 20 + Math.random() * 120;
      await eventually(() => Date.now() >= until, 15_000, 5, 'the writer to have written for a while');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      const { records: valid, broken } = records.list();
      expect(broken).toEqual([]);
      expect(valid.map((r) => r.name).sort()).toEqual(['api-3', 'pi-main', 'web-2']);
      for (const r of valid) {
        const turn = Number(/^turn (\d+)/.exec(r.description)?.[1]);
        expect(r.reservedSeq).toBe(turn * 1000);
        expect(r.sessionFile).toBe(`/home/me/.pi/sessions/${r.name}-${turn}.jsonl`);
      }
      // Each run starts its count afresh; the records it left are whole whatever the count.
      lastSeen = Math.max(lastSeen, ...valid.map((r) => r.reservedSeq));
    }
    expect(lastSeen).toBeGreaterThan(0);
    // Temp files of a write cut short may stay behind; they are never taken for records.
    expect(
      readdirSync(records.dir)
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(['api-3.json', 'pi-main.json', 'web-2.json']);
  }, 120_000);
});
