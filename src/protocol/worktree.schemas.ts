/**
 * A session's git worktree (docs/api.md "Worktrees and changes"): its fields, written once here,
 * as TypeBox schemas in two views. `SessionWorktree` is the worktree as tether stores it and reads
 * it back (the session record, the session's tmux option `@tether-worktree`): each field checked,
 * nothing else allowed. `WorktreeFacts` is the same fields as an answer carries them (the session
 * list, `session-meta`, the changes answer), which is cut to them: what it holds was checked where
 * it was read. The generated check is worktree.checks.ts (`npm run schemas`).
 *
 * The type is the session machine's `SessionWorktree`, which carries it to the session's creation
 * (a machine imports nothing above it): both views are bound to that type below, so a field
 * changed in one place alone fails to compile.
 */
import { Type, type Static } from 'typebox';
import type { SessionWorktree as MachineWorktree } from '../machines/session.machine.js';
import type { Holds, Same } from './same-type.js';

/** A commit's full name, SHA-1 or SHA-256. */
const COMMIT_PATTERN = '^[0-9a-f]{40,64}$';

/** The fields; `stored`: with what a stored worktree must hold beyond each field's type. */
function worktreeFields(stored: boolean) {
  const text = (description?: string) =>
    Type.String({ ...(stored ? { minLength: 1 } : {}), ...(description !== undefined ? { description } : {}) });
  return {
    repo: text("the repository's main working tree"),
    branch: text(),
    path: text("the worktree's folder, where the agent started"),
    base: Type.String({ ...(stored ? { pattern: COMMIT_PATTERN } : {}), description: 'the commit the session started from' }),
    newBranch: Type.Boolean({ description: 'tether made the branch: removing the worktree removes it' }),
  };
}

/** The worktree as tether stores it and reads it back: a value that fails is not tether's. */
export const SessionWorktree = Type.Object(worktreeFields(true), { additionalProperties: false });

/** The worktree as an answer carries it (the session list, `session-meta`, the changes answer). */
export const WorktreeFacts = Type.Object(worktreeFields(false));

/**
 * Both views' type is the machine's, field for field: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type ViewsAreTheMachinesType = [
  Holds<Same<Static<typeof SessionWorktree>, MachineWorktree>>,
  Holds<Same<Static<typeof WorktreeFacts>, MachineWorktree>>,
];
