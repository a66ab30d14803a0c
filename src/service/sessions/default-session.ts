/**
 * The session a daemon makes when it starts with none (`[agent] default_session`,
 * docs/configuration.md "Start-up"): a person who runs `npm start` finds the agent waiting. A
 * failure is logged, never the start's refusal: the daemon serves, and a phone can make one.
 */
import type { Logger } from '../../log.js';
import type { SidecarSystem } from '../../actors/system.js';

export async function createDefaultSessionIfNone(
  system: Pick<SidecarSystem, 'sessionIds' | 'createSession'>,
  name: string,
  log: Logger,
): Promise<void> {
  if (system.sessionIds().length > 0) return;
  await system.createSession(name, 'cli').catch((err: Error) => {
    log.error({ err: err.message }, 'the default session could not be created');
  });
}
