/**
 * The session records: for each tether session, what it takes to bring it back when its tmux
 * server is gone (killed, crashed, the machine restarted): its name and description, the
 * directory the agent started in, which configured agent it runs and its command, the file pi
 * keeps the conversation in (or another agent's conversation id),
 * when it was created, and the stream position reserved so far (positions after a restore start
 * above it, so none is ever reused). docs/reliability.md says what is restored and what is not.
 *
 * One JSON file per session, `<dataDir>/sessions/<name>.json`, mode 0600 in a 0700 directory,
 * each written atomically (temp file, fsync, rename): a crash at any moment leaves the old record
 * or the new one, never a part. Only the daemon writes them.
 *
 * Invariant: a record's name is a valid session name (so its file name is safe), and a file
 * that does not hold a valid record is reported, never trusted.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError, storeFailure } from '../errors.js';
import { writeAtomic } from '../files.js';
import { checkOf } from '../protocol/schema-check.js';
import { isValidSessionName } from '../protocol/session-name.js';
import { CHECKS as GENERATED, SessionRecordSchema } from './records.checks.js';
import type { SessionRecord } from './records.schemas.js';
import { DATA_DIR_NAMES } from '../config/data-layout.js';

export type { SessionRecord } from './records.schemas.js';

const check = checkOf(GENERATED, SessionRecordSchema);

/** A file in the records directory that holds no valid record, and why. */
export interface BrokenRecord {
  readonly file: string;
  readonly why: string;
}

/** A record that cannot be written: a name that is no session's, a record off its schema (`record-invalid`). */
const invalid = (message: string): DomainError => new DomainError('record-invalid', message);

export class SessionRecords {
  readonly dir: string;
  /**
   * The records marked unrestorable, by name, from the first time they are asked for: every
   * later change goes through this object. `GET /sessions` and `/health` ask on every request,
   * and reading every record file each time was a file read per session per request.
   */
  private unrestorables: Map<string, SessionRecord> | null = null;

  constructor(dataDir: string) {
    this.dir = join(dataDir, DATA_DIR_NAMES.sessions);
  }

  private file(name: string): string {
    if (!isValidSessionName(name)) throw invalid(`not a session name: ${JSON.stringify(name.slice(0, 80))}`);
    return join(this.dir, `${name}.json`);
  }

  /** The record of `name`, or null when there is none (or it is not valid: see `list`). */
  read(name: string): SessionRecord | null {
    let text: string;
    try {
      text = readFileSync(this.file(name), 'utf8');
    } catch {
      return null;
    }
    return parseRecord(text, name);
  }

  /** Every valid record, by name, and the files that hold none. */
  list(): { records: SessionRecord[]; broken: BrokenRecord[] } {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return { records: [], broken: [] };
    }
    const records: SessionRecord[] = [];
    const broken: BrokenRecord[] = [];
    for (const entry of names.sort()) {
      if (!entry.endsWith('.json')) continue; // a temp file of a write in progress, or not ours
      const name = entry.slice(0, -'.json'.length);
      let record: SessionRecord | null;
      try {
        record = isValidSessionName(name) ? parseRecord(readFileSync(join(this.dir, entry), 'utf8'), name) : null;
      } catch (err) {
        broken.push({ file: entry, why: (err as Error).message });
        continue;
      }
      if (record) records.push(record);
      else broken.push({ file: entry, why: 'not a valid session record' });
    }
    return { records, broken };
  }

  /** The records marked unrestorable (`ended.reason`), by name. */
  unrestorable(): SessionRecord[] {
    this.unrestorables ??= new Map(
      this.list()
        .records.filter(isUnrestorable)
        .map((r) => [r.name, r]),
    );
    // In the order `list` gives (its files' names sorted).
    const file = (r: SessionRecord) => `${r.name}.json`;
    return [...this.unrestorables.values()].sort((a, b) => (file(a) < file(b) ? -1 : file(a) > file(b) ? 1 : 0));
  }

  /** Writes the whole record, atomically. */
  write(record: SessionRecord): void {
    const value: unknown = record;
    if (!check.Check(value)) throw invalid(`not a valid session record for ${JSON.stringify(record.name).slice(0, 80)}`);
    const path = this.file(record.name);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeAtomic(path, `${JSON.stringify(record, null, 2)}\n`, storeFailure);
    if (!this.unrestorables) return;
    if (isUnrestorable(record)) this.unrestorables.set(record.name, record);
    else this.unrestorables.delete(record.name);
  }

  /** Changes some fields of an existing record; false when there is none. */
  update(name: string, change: Partial<Omit<SessionRecord, 'v' | 'name'>>): boolean {
    const current = this.read(name);
    if (!current) return false;
    const next = { ...current, ...change };
    if (JSON.stringify(next) !== JSON.stringify(current)) this.write(next);
    return true;
  }

  /** Forgets a session (deleted on purpose: it is not to come back). */
  remove(name: string): void {
    rmSync(this.file(name), { force: true });
    this.unrestorables?.delete(name);
  }
}

const isUnrestorable = (r: SessionRecord): boolean => r.ended?.reason === 'unrestorable';

/** The record in `text` if it is a valid one for `name`, else null. */
function parseRecord(text: string, name: string): SessionRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!check.Check(value)) return null;
  return value.name === name ? value : null;
}
