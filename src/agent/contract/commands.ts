/**
 * A slash command as `GET /sessions/:id/commands` lists it, whatever the agent. Each agent's
 * adapter says where its commands come from: pi's built-ins plus what its extension reports,
 * Claude Code's built-ins plus the user's and the project's command files.
 */

/** One slash command as the API lists it. */
export interface SlashCommand {
  readonly name: string;
  readonly description: string;
  /** Argument schema; its inner shape is the agent's (the contract leaves it to the agent). */
  readonly args?: unknown;
}

/** `first`, then the commands of `more` whose names are not listed yet (the first of a name wins). */
export function mergeCommands(first: readonly SlashCommand[], more: readonly SlashCommand[]): SlashCommand[] {
  const names = new Set(first.map((c) => c.name));
  const extra = more
    .filter((c) => !names.has(c.name) && names.add(c.name))
    .map((c) =>
      c.args === undefined ? { name: c.name, description: c.description } : { name: c.name, description: c.description, args: c.args },
    );
  return [...first, ...extra];
}
