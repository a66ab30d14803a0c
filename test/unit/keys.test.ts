import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_NAMES, resolveKey, sendKeyCommands, sendKeysHexCommands } from '../../src/tmux/input.js';
import { domainError } from '../helpers/domain-error.js';

describe('resolveKey', () => {
  it.each([
    ['escape', 'Escape'],
    ['tab', 'Tab'],
    ['shift-tab', 'BTab'],
    ['enter', 'Enter'],
    ['backspace', 'BSpace'],
    ['delete', 'DC'],
    ['insert', 'IC'],
    ['space', 'Space'],
    ['up', 'Up'],
    ['down', 'Down'],
    ['left', 'Left'],
    ['right', 'Right'],
    ['home', 'Home'],
    ['end', 'End'],
    ['pageup', 'PPage'],
    ['pagedown', 'NPage'],
    ['f1', 'F1'],
    ['f12', 'F12'],
    ['ctrl-a', 'C-a'],
    ['ctrl-z', 'C-z'],
    ['ctrl-space', 'C-Space'],
    ['ctrl-left', 'C-Left'],
    ['ctrl-right', 'C-Right'],
    ['ENTER', 'Enter'],
    ['Shift-Tab', 'BTab'],
    ['Ctrl-C', 'C-c'],
    ['PageUp', 'PPage'],
  ])('%s -> tmux %s', (name, key) => {
    expect(resolveKey(name)).toEqual({ kind: 'tmux', key });
  });

  it('sends alt-<char> as ESC plus the character, keeping its case', () => {
    expect(resolveKey('alt-x')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1bx') });
    expect(resolveKey('ALT-X')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1bX') });
    expect(resolveKey('alt-é')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1bé') });
    expect(resolveKey('alt-😀')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1b😀') });
    expect(resolveKey('alt-;')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1b;') });
    expect(resolveKey('alt--')).toEqual({ kind: 'bytes', bytes: Buffer.from('\x1b-') });
  });

  it.each([
    '',
    'f0',
    'f13',
    'ctrl-1',
    'ctrl-',
    'alt-',
    'alt-ab',
    'alt-enter',
    'alt-\ud800',
    'C-a',
    'Up ',
    'kill-server',
    'BSpace',
    'ctrl-a;',
  ])('%j is unknown', (name) => {
    expect(resolveKey(name)).toBeNull();
  });

  it('lists every name it accepts', () => {
    expect(KEY_NAMES).toHaveLength(16 + 12 + 26 + 3 + 1);
    for (const name of KEY_NAMES.filter((n) => n !== 'alt-<char>')) expect(resolveKey(name)).not.toBeNull();
    expect(KEY_NAMES).toContain('alt-<char>');
  });
});

describe('sendKeysHexCommands', () => {
  it('writes hex bytes, NUL included', () => {
    expect(sendKeysHexCommands('%3', Buffer.from('A;\0€\n'))).toEqual(['send-keys -t %3 -H 41 3b 00 e2 82 ac 0a']);
    expect(sendKeysHexCommands('%3', Buffer.alloc(0))).toEqual([]);
  });

  it('chunks in order, every line within the limit, the bytes unchanged', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.integer({ min: 1, max: 700 }), (bytes, max) => {
        const lines = sendKeysHexCommands('%12', Buffer.from(bytes), max);
        expect(lines.length).toBe(Math.ceil(bytes.length / max));
        const back: number[] = [];
        for (const line of lines) {
          const m = /^send-keys -t %12 -H ((?:[0-9a-f]{2})(?: [0-9a-f]{2})*)$/.exec(line);
          expect(m).not.toBeNull();
          const hex = m![1]!.split(' ');
          expect(hex.length).toBeLessThanOrEqual(max);
          back.push(...hex.map((h) => parseInt(h, 16)));
        }
        expect(Buffer.from(back).equals(Buffer.from(bytes))).toBe(true);
      }),
    );
  });

  it('refuses a pane id that is not one', () => {
    expect(() => sendKeysHexCommands('%3; kill-server', Buffer.from('a'))).toThrow(domainError('invalid'));
    expect(() => sendKeysHexCommands('=s:', Buffer.from('a'))).toThrow(domainError('invalid'));
  });
});

describe('sendKeyCommands', () => {
  it('sends tmux keys by name and alt keys as bytes', () => {
    expect(sendKeyCommands('%1', resolveKey('up')!)).toEqual(['send-keys -t %1 Up']);
    expect(sendKeyCommands('%1', resolveKey('ctrl-space')!)).toEqual(['send-keys -t %1 C-Space']);
    expect(sendKeyCommands('%1', resolveKey('alt-b')!)).toEqual(['send-keys -t %1 -H 1b 62']);
  });
});
