/**
 * opencode's report of a prompt the user submitted (src/agent/opencode/plugin-fields.ts
 * `chatMessageFields`, the plugin's `chat.message` hook): the text of the message's own text
 * parts, joined by lines, cut to a hook field's length; nothing for a message without text.
 */
import { describe, expect, it } from 'vitest';
import { chatMessageFields } from '../../src/agent/opencode/plugin-fields.js';
import { MAX_HOOK_FIELD_CHARS } from '../../src/agent/wire/hook-wire.js';

const input = { sessionID: 'ses_1', agent: 'build', model: { providerID: 'fake', modelID: 'fake' } };
const text = (t: string, more: Record<string, unknown> = {}) => ({ id: 'prt', type: 'text', text: t, ...more });

describe("chatMessageFields: opencode's chat.message hook", () => {
  it('reports the text parts, joined by lines, with the conversation', () => {
    expect(chatMessageFields(input, { message: {}, parts: [text('fix the login page')] })).toEqual({
      type: 'chat.message',
      session: 'ses_1',
      text: 'fix the login page',
    });
    expect(
      chatMessageFields(input, {
        parts: [text('look at this file'), { type: 'file', url: 'file:///w/a.ts', mime: 'text/plain' }, text('and fix it')],
      }),
    ).toEqual({ type: 'chat.message', session: 'ses_1', text: 'look at this file\nand fix it' });
  });

  it("leaves out the parts opencode adds itself (synthetic: a file's content, a reminder)", () => {
    expect(
      chatMessageFields(input, {
        parts: [
          text('Called the Read tool with …', { synthetic: true }),
          text('what does this do?'),
          text('<reminder>', { synthetic: true }),
        ],
      }),
    ).toEqual({ type: 'chat.message', session: 'ses_1', text: 'what does this do?' });
  });

  it.each([
    ['only files', { parts: [{ type: 'file', url: 'file:///w/a.png', mime: 'image/png' }] }],
    ['only synthetic text', { parts: [text('added by opencode', { synthetic: true })] }],
    ['blank text', { parts: [text('  \n ')] }],
    ['no parts', { parts: [] }],
    ['parts not a list', { parts: 'fix it' }],
    ['a text part whose text is not a string', { parts: [{ type: 'text', text: 42 }] }],
    ['no output', undefined],
    ['an output that is not an object', 'fix it'],
  ])('reports nothing for a message with %s', (_what, output) => {
    expect(chatMessageFields(input, output)).toBeNull();
  });

  it(`cuts the text to ${MAX_HOOK_FIELD_CHARS} characters, as every hook field`, () => {
    const long = 'x'.repeat(MAX_HOOK_FIELD_CHARS + 500);
    const fields = chatMessageFields(input, { parts: [text(long)] });
    expect(fields?.text).toBe(long.slice(0, MAX_HOOK_FIELD_CHARS));
    expect(Object.values(fields!).every((v) => v.length <= MAX_HOOK_FIELD_CHARS)).toBe(true);
  });

  it('leaves the conversation out when opencode does not name it', () => {
    expect(chatMessageFields({}, { parts: [text('fix it')] })).toEqual({ type: 'chat.message', text: 'fix it' });
    expect(chatMessageFields(null, { parts: [text('fix it')] })).toEqual({ type: 'chat.message', text: 'fix it' });
  });
});
