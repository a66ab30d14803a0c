/**
 * Prompts from a phone to the real opencode (docs/api.md "Prompts"): typed as a bracketed paste,
 * then Enter once it drew it, confirmed by the `chat.message` hook of tether's plugin.
 */
import { agentWithPushToml } from '../helpers/agent-config.js';
import { opencodeParts } from '../helpers/agent-parts.js';
import { promptsTo } from '../helpers/prompt-suite.js';

promptsTo({
  title: 'opencode',
  turns: 'opencode',
  fixture: {
    prefix: 'tether-prompts-opencode-',
    start: opencodeParts((req) => ((req as { tools?: unknown[] }).tools?.length ? { text: 'ok' } : { text: 'Prompt title' })),
    toml: (apns) => agentWithPushToml('opencode', [], apns),
    phone: 'd5'.repeat(32),
    session: { name: 'oc', agent: 'opencode', ready: ['Ask anything'] },
  },
});
