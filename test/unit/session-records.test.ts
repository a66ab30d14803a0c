/**
 * The session records on real files: what is written is read back exactly, a file that holds
 * no valid record is reported and never trusted, names are checked before they become paths,
 * and files are private (0600 in a 0700 directory).
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionRecords, type SessionRecord } from '../../src/restore/records.js';
import { domainError } from '../helpers/domain-error.js';

const record = (name: string, change: Partial<SessionRecord> = {}): SessionRecord => ({
  v: 1,
  name,
  description: 'fix the login form; #{pane_id} $(x)\nsecond line',
  cwd: '/home/me/a dir/with #{odd} $(chars)',
  command: ['/usr/bin/pi', '-e', '/opt/tether/extension.js', '--tether'],
  sessionFile: '/home/me/.pi/agent/sessions/--home-me--/2026-11-25T10-00-00_abc.jsonl',
  createdAt: '2026-11-25T10:00:00.000Z',
  reservedSeq: 123_456_789,
  server: { pid: 4242, startTime: 1_764_000_000 },
  ended: null,
  ...change,
});

describe('session records', () => {
  let dataDir: string;
  let records: SessionRecords;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tether-records-'));
    records = new SessionRecords(dataDir);
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('reads back exactly what was written, updates fields, and forgets a removed session', () => {
    expect(records.read('pi-main')).toBeNull();
    records.write(record('pi-main'));
    records.write(record('web-2', { cwd: null, sessionFile: null }));
    expect(records.read('pi-main')).toEqual(record('pi-main'));
    expect(records.update('pi-main', { sessionFile: '/tmp/other.jsonl', reservedSeq: 200_000_000 })).toBe(true);
    expect(records.read('pi-main')).toEqual(record('pi-main', { sessionFile: '/tmp/other.jsonl', reservedSeq: 200_000_000 }));
    expect(records.update('absent', { description: 'x' })).toBe(false);
    expect(records.list().records.map((r) => r.name)).toEqual(['pi-main', 'web-2']);
    records.remove('web-2');
    expect(records.read('web-2')).toBeNull();
    expect(records.list().records.map((r) => r.name)).toEqual(['pi-main']);
  });

  it('knows the unrestorable ones as the files say at first, then as every write, update and removal leaves them', () => {
    const gone = { reason: 'unrestorable' as const, detail: 'its directory is gone', at: '2026-11-25T11:00:00.000Z' };
    records.write(record('pi-1', { ended: gone }));
    records.write(record('pi-1-2', { ended: gone }));
    records.write(record('pi-main'));
    const names = () => records.unrestorable().map((r) => r.name);
    // In the order of list(): the files' names sorted.
    expect(names()).toEqual(
      records
        .list()
        .records.filter((r) => r.ended?.reason === 'unrestorable')
        .map((r) => r.name),
    );
    expect(names()).toEqual(['pi-1-2', 'pi-1']);
    records.update('pi-main', { ended: gone });
    expect(names()).toEqual(['pi-1-2', 'pi-1', 'pi-main']);
    records.update('pi-1', { ended: null });
    records.remove('pi-1-2');
    expect(names()).toEqual(['pi-main']);
    expect(records.unrestorable()[0]).toEqual(records.read('pi-main'));
    // A second reader of the same files agrees.
    expect(new SessionRecords(dataDir).unrestorable().map((r) => r.name)).toEqual(['pi-main']);
  });

  it('keeps files private: 0600 records in a 0700 directory', () => {
    records.write(record('pi-main'));
    expect(statSync(records.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(records.dir, 'pi-main.json')).mode & 0o777).toBe(0o600);
  });

  it('reports a file that holds no valid record, and never trusts it', () => {
    records.write(record('good'));
    writeFileSync(join(records.dir, 'torn.json'), '{"v":1,"name":"torn","descr');
    writeFileSync(join(records.dir, 'other-name.json'), JSON.stringify(record('not-other-name')));
    writeFileSync(join(records.dir, 'wrong-type.json'), JSON.stringify({ ...record('wrong-type'), reservedSeq: 'many' }));
    writeFileSync(join(records.dir, 'x.123.ab.tmp'), 'a write in progress');
    const { records: valid, broken } = records.list();
    expect(valid.map((r) => r.name)).toEqual(['good']);
    expect(broken.map((b) => b.file).sort()).toEqual(['other-name.json', 'torn.json', 'wrong-type.json']);
    expect(records.read('torn')).toBeNull();
    expect(records.read('other-name')).toBeNull();
  });

  it('never turns a hostile name into a path, and refuses an invalid record without writing it', () => {
    for (const name of ['../../etc/passwd', 'a/b', '', 'a\u0000b', '.', 'x'.repeat(65)]) {
      expect(() => records.write(record(name))).toThrow(domainError('record-invalid'));
      expect(() => records.remove(name)).toThrow(domainError('record-invalid'));
    }
    expect(() => records.write(record('ok', { reservedSeq: -1 }))).toThrow(domainError('record-invalid'));
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
