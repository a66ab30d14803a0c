/**
 * The schemas of a session's changes routes (docs/api.md "Worktrees and changes": what the
 * working tree changed against its base, and one file's diff), as TypeBox schemas: the source of
 * their types and of the generated checks (changes-routes.checks.ts, `npm run schemas`).
 */
import { Type } from 'typebox';
import { WorktreeFacts } from '../../protocol/worktree.schemas.js';
import { ChangesSummary, Nullable } from './session-routes.schemas.js';

const ChangeStatus = Type.Union([
  Type.Literal('added'),
  Type.Literal('modified'),
  Type.Literal('deleted'),
  Type.Literal('renamed'),
  Type.Literal('untracked'),
]);
const ChangedFile = Type.Object({
  path: Type.String(),
  oldPath: Nullable(Type.String()),
  status: ChangeStatus,
  added: Nullable(Type.Integer({ minimum: 0 })),
  removed: Nullable(Type.Integer({ minimum: 0 })),
  binary: Type.Boolean(),
});
const Changes = Type.Object({
  id: Type.String(),
  worktree: Nullable(WorktreeFacts),
  root: Type.String({ description: 'the top of the working tree' }),
  base: Type.String({ description: 'the commit compared with' }),
  head: Nullable(Type.String()),
  branch: Nullable(Type.String()),
  files: Type.Array(ChangedFile),
  filesTruncated: Type.Boolean(),
  commits: Type.Array(Type.Object({ sha: Type.String(), subject: Type.String(), author: Type.String(), date: Type.String() })),
  commitsTruncated: Type.Boolean(),
  summary: ChangesSummary,
});
const FileDiff = Type.Object({
  path: Type.String(),
  oldPath: Nullable(Type.String()),
  status: Nullable(ChangeStatus),
  binary: Type.Boolean(),
  diff: Nullable(Type.String()),
  truncated: Type.Boolean(),
});

export const ChangesRouteSchemas = {
  Changes,
  DiffQuery: Type.Object(
    { path: Type.String({ minLength: 1, maxLength: 4096 }), token: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  FileDiff,
};
