/**
 * Prompts from a phone to the real Gemini CLI (docs/api.md "Prompts"): typed as a bracketed
 * paste, then Enter past its fast-return window, confirmed by its BeforeAgent hook.
 */
import { isAgentTurn, sideReply } from '../../testkit/fake-gemini.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { geminiParts } from '../helpers/agent-parts.js';
import { promptsTo } from '../helpers/prompt-suite.js';

promptsTo({
  title: 'Gemini CLI',
  turns: 'gemini',
  fixture: {
    prefix: 'tether-prompts-gemini-',
    start: geminiParts((req) => (isAgentTurn(req) ? { text: 'ok' } : sideReply(req))),
    toml: (apns) => agentWithPushToml('gemini', [], apns),
    phone: 'd4'.repeat(32),
    session: { name: 'gm', agent: 'gemini', ready: ['Gemini CLI v0.61.0', 'Type your message'] },
  },
});
