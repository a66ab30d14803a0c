/**
 * The default agent, named once: the kind of agent tether starts when the config names none, the
 * program `[agent] command` runs by default (the same word), the stem of the default session's
 * name and of the names of sessions created without one. The agent list (src/agent/contract/adapters.ts)
 * gives its adapter as DEFAULT_ADAPTER; test/unit/adapters.test.ts checks that nothing else in
 * the core spells it.
 */

/** The default agent's kind, and its program's name. */
export const DEFAULT_AGENT_KIND = 'pi';

/** `[agent] default_session`'s default. */
export const DEFAULT_SESSION_NAME = `${DEFAULT_AGENT_KIND}-main`;
