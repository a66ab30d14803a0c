/**
 * Prompts from a phone to the real Codex (docs/api.md "Prompts"): typed as a bracketed paste,
 * then Enter past its paste-burst window, confirmed by the user message in its rollout file.
 */
import { CODEX_CX, codexParts } from '../helpers/agent-parts.js';
import { promptsTo } from '../helpers/prompt-suite.js';

promptsTo({
  title: 'Codex',
  turns: 'codex',
  fixture: {
    ...CODEX_CX,
    prefix: 'tether-prompts-codex-',
    start: codexParts(() => ({ text: 'ok' })),
    phone: 'd3'.repeat(32),
  },
});
