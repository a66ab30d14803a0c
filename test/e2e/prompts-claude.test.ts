/**
 * Prompts from a phone to the real Claude Code (docs/api.md "Prompts"): typed as a bracketed
 * paste, then Enter past its paste window, confirmed by its UserPromptSubmit hook.
 */
import { isAgentTurn } from '../../testkit/fake-anthropic.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { promptsTo } from '../helpers/prompt-suite.js';

promptsTo({
  title: 'Claude Code',
  turns: 'claude',
  fixture: {
    ...CLAUDE_CC,
    prefix: 'tether-prompts-claude-',
    start: claudeParts((req) => (isAgentTurn(req) ? { text: 'ok' } : { text: 'Prompt title' })),
    phone: 'd2'.repeat(32),
  },
});
