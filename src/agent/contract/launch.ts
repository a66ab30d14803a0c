/**
 * How a session's agent is started with tether's integration injected: the agent's own argv (the
 * configured command line and `args`) plus what its adapter adds (a plugin, a settings file with
 * hooks, a notify program), plus how a restored session reopens its conversation. Every word is
 * one argv element: nothing here is ever read by a shell, and a user's own agent files are never
 * edited.
 */
import type { AgentResume, LaunchContext } from './adapter.js';
import { adapterOf } from './kinds.js';

export type { AgentResume, LaunchContext } from './adapter.js';

/** The argv a session of this kind runs: the agent's own, then its adapter's additions (none for `other`). */
export function integratedArgv(kind: string, argv: readonly string[], ctx: LaunchContext, resume: AgentResume = {}): string[] {
  const adapter = adapterOf(kind);
  return adapter ? adapter.argv(argv, ctx, resume) : [...argv];
}

/** The variables the kind's integration sets in the agent's pane (none for `other`). */
export function integratedEnv(kind: string, ctx: LaunchContext, env: NodeJS.ProcessEnv): Record<string, string> {
  return adapterOf(kind)?.env?.(ctx, env) ?? {};
}

/** Whether the kind reports state to tether (its panes get the agent socket's path). */
export function reportsState(kind: string): boolean {
  return adapterOf(kind) !== null;
}
