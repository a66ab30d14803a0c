/**
 * Prompts from a phone to the real pi (docs/api.md "Prompts"): typed as a bracketed paste, then
 * Enter once pi drew it, confirmed by the user message pi's tether extension reports.
 */
import { piWithPushToml } from '../helpers/agent-config.js';
import { piParts, promptsTo } from '../helpers/prompt-suite.js';

promptsTo({
  title: 'pi',
  turns: 'pi',
  fixture: {
    prefix: 'tether-prompts-pi-',
    start: piParts(() => ({ text: 'ok' })),
    toml: piWithPushToml,
    phone: 'd1'.repeat(32),
    session: { name: 'pm', agent: 'pi', ready: ['fake-agent'] },
  },
});
