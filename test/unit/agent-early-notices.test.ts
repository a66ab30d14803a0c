/**
 * A notice an agent writes to its terminal before the daemon knows which agent runs there (the
 * daemon asks tmux for the session's agent while the agent starts) is not lost: it reaches the
 * agent's adapter once the kind is known (src/agent/hub/agent-service.ts). Codex registers by its
 * first idle state (OSC 7501): lost, a prompt from the phone waited for a report that never came.
 * Real tmux on a private socket; Codex's real adapter.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentService, EARLY_NOTICES } from '../../src/agent/hub/agent-service.js';
import { silentLogger } from '../../src/log.js';
import { SESSION_OPTIONS } from '../../src/tmux/layout.js';
import { usePaneOnPrivateTmux } from '../helpers/tmux-fixture.js';

const SESSION = 'cx';
const codexState = (state: string) => ({ code: 7501, text: `state=${state}:app=codex` });

describe('notices before the session is seen', () => {
  const { tmux } = usePaneOnPrivateTmux(SESSION);
  let service: AgentService | null = null;
  afterEach(async () => {
    await service?.stop();
    service = null;
  });

  const make = (kind: (name: string) => string | null = () => 'codex') =>
    (service = new AgentService({
      cli: tmux.cli,
      socketPath: join(tmux.dir, 'agent.sock'),
      namingCommand: [],
      namingModel: '',
      env: {},
      now: Date.now,
      log: silentLogger,
      agentKind: kind,
    }));

  it("reach the agent's adapter once its kind is known: Codex's first idle registers it", async () => {
    await tmux.tmux('set-option', '-t', `=${SESSION}:`, SESSION_OPTIONS.agent, 'codex');
    const agents = make();
    agents.notice(SESSION, codexState('idle'));
    expect(agents.states.current(SESSION)).toBeNull();
    await agents.sessionSeen(SESSION);
    expect(agents.states.current(SESSION)?.value).toBe('idle');
  });

  it('are kept at most EARLY_NOTICES a session, the newest, and dropped for a session whose agent has no kind', async () => {
    await tmux.tmux('set-option', '-t', `=${SESSION}:`, SESSION_OPTIONS.agent, 'codex');
    // Other apps' states, which Codex's adapter passes over: EARLY_NOTICES of them push the idle out.
    const others = (n: number) => Array.from({ length: n }, () => ({ code: 7501, text: 'state=idle:app=other' }));
    const first = make();
    first.notice(SESSION, codexState('idle'));
    for (const n of others(EARLY_NOTICES)) first.notice(SESSION, n);
    await first.sessionSeen(SESSION);
    expect(first.states.current(SESSION)).toBeNull();
    await first.stop();

    const agents = make();
    for (const n of others(EARLY_NOTICES * 4)) agents.notice(SESSION, n);
    agents.notice(SESSION, codexState('idle'));
    await agents.sessionSeen(SESSION);
    expect(agents.states.current(SESSION)?.value).toBe('idle');
    await agents.stop();

    const unknown = make(() => null);
    unknown.notice(SESSION, codexState('idle'));
    await unknown.sessionSeen(SESSION);
    expect(unknown.states.current(SESSION)).toBeNull();
  });
});
