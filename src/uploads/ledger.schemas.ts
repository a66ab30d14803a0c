/**
 * The uploads ledger (upload-ledger.ts) as a TypeBox schema: the source of its type and of the
 * generated check (ledger.checks.ts, `npm run schemas`). The running code imports only types
 * from here.
 *
 * A file's or a folder's identity is its device, inode and birth time (nanoseconds), as decimal
 * strings (an inode can pass 2^53 on some file systems): a path whose identity changed holds
 * something else now. The birth time tells a new file from an old one whose freed inode it got
 * (ext4 hands a freed inode out again at once); a file system that keeps no birth time gives 0.
 */
import { Type, type Static } from 'typebox';
import { SESSION_NAME_PATTERN } from '../protocol/session-name.js';

const Decimal = Type.String({ pattern: '^[0-9]{1,24}$' });

const Identity = {
  path: Type.String({ minLength: 2, pattern: '^/' }),
  dev: Decimal,
  ino: Decimal,
  born: Decimal,
};

/** A file tether created for a session's upload. */
export const LedgerFileSchema = Type.Object(
  {
    session: Type.String({ pattern: SESSION_NAME_PATTERN }),
    ...Identity,
    /** When it was created (epoch ms): the keep-days clean-up counts from here. */
    at: Type.Integer({ minimum: 0 }),
    /**
     * Its size and modification time (ns) once its body was written; absent while it is being
     * written (or when the daemon died then). A file changed since is left alone.
     */
    written: Type.Optional(Type.Object({ size: Decimal, mtime: Decimal }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

/** A session's folder that tether created itself (one that was there before is the user's). */
export const LedgerFolderSchema = Type.Object(
  { session: Type.String({ pattern: SESSION_NAME_PATTERN }), ...Identity },
  { additionalProperties: false },
);

export const UploadLedgerSchema = Type.Object(
  {
    v: Type.Literal(1),
    files: Type.Array(LedgerFileSchema),
    folders: Type.Array(LedgerFolderSchema),
  },
  { additionalProperties: false },
);

export type LedgerFile = Static<typeof LedgerFileSchema>;
export type LedgerFolder = Static<typeof LedgerFolderSchema>;
export type UploadLedgerContent = Static<typeof UploadLedgerSchema>;
