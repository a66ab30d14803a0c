/**
 * What tether wrote for uploads (docs/api.md "Uploads"): every file it created, and every
 * session folder it made itself, each with its identity (device, inode and birth time). Only what this
 * ledger names may ever be removed, and only while its identity still matches: a file the user
 * put beside an upload, a folder that was there before, or a file the user put in place of an
 * upload at the same path is never tether's. Nothing is guessed from names or directory listings.
 *
 * One JSON file in the data dir (0600), replaced atomically on each change (src/files.ts). The
 * daemon is its only writer; each change is made and written synchronously, so changes never
 * interleave and no entry is lost between concurrent uploads. Bounded: an entry leaves when its
 * file or folder is removed or found gone or replaced, and the store keeps at most
 * MAX_KEPT_UPLOADS files.
 *
 * A ledger file that cannot be read or holds no valid ledger is reported and taken as empty:
 * tether then forgets files it wrote (they stay on disk), never takes another's for its own.
 */
import { readFileSync } from 'node:fs';
import { storeFailure } from '../errors.js';
import { errnoOf, writeAtomic } from '../files.js';
import type { Logger } from '../log.js';
import { checkOf } from '../protocol/schema-check.js';
import { CHECKS as GENERATED, UploadLedgerSchema } from './ledger.checks.js';
import type { LedgerFile, LedgerFolder, UploadLedgerContent } from './ledger.schemas.js';

export type { LedgerFile, LedgerFolder } from './ledger.schemas.js';

const check = checkOf(GENERATED, UploadLedgerSchema);

/** The ledger's file name in the data dir. */

/** A file's or folder's identity, as stat gives it with `bigint: true` (ledger.schemas.ts). */
export interface Identity {
  readonly dev: string;
  readonly ino: string;
  readonly born: string;
}

/** The identity of a stat result (read with `{ bigint: true }`). */
export const identityOf = (st: { dev: bigint; ino: bigint; birthtimeNs: bigint }): Identity => ({
  dev: st.dev.toString(),
  ino: st.ino.toString(),
  born: st.birthtimeNs.toString(),
});

/** Whether two identities are the same file. */
export const sameIdentity = (a: Identity, b: Identity): boolean => a.dev === b.dev && a.ino === b.ino && a.born === b.born;

/** What a change may do: the current entries, to be replaced by what it returns. */
export interface LedgerEntries {
  readonly files: readonly LedgerFile[];
  readonly folders: readonly LedgerFolder[];
}

export class UploadLedger {
  private content: LedgerEntries | null = null;

  constructor(
    readonly path: string,
    private readonly log?: Logger,
  ) {}

  /** The entries as they stand (read from the file on first use). */
  entries(): LedgerEntries {
    this.content ??= this.load();
    return this.content;
  }

  /**
   * Replaces the entries with `change(current)` and writes the file before taking them: a
   * failed write (`store-io`) leaves the ledger as it was. A change that changes nothing writes
   * nothing.
   */
  change(change: (current: LedgerEntries) => LedgerEntries): void {
    const current = this.entries();
    const next = change(current);
    if (next.files === current.files && next.folders === current.folders) return;
    const content: UploadLedgerContent = { v: 1, files: [...next.files], folders: [...next.folders] };
    writeAtomic(this.path, `${JSON.stringify(content)}\n`, storeFailure);
    this.content = { files: content.files, folders: content.folders };
  }

  private load(): LedgerEntries {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') this.problem(`${this.path} cannot be read (${(err as Error).message})`);
      return { files: [], folders: [] };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = null;
    }
    if (!check.Check(value)) {
      this.problem(`${this.path} holds no valid uploads ledger`);
      return { files: [], folders: [] };
    }
    return { files: value.files, folders: value.folders };
  }

  private problem(what: string): void {
    this.log?.warn(`${what}: uploads written before are left in place and no longer removed by tether`);
  }
}
