import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_NAMES, resolveKey, sendKeyCommands, sendKeysHexCommands } from '../../src/tmux/pane/input.js';
import { domainError } from '../helpers/domain-error.js';

/** The key names docs/api.md "Key names" lists besides `f1`…`f12`, `ctrl-a`…`ctrl-z` and `alt-<char>`. */
const NAMED = ['escape', 'tab', 'shift-tab', 'enter', 'backspace', 'delete', 'insert', 'space'];
const MOVES = ['up', 'down', 'left', 'right', 'home', 'end', 'pageup', 'pagedown'];
const CTRL_NAMED = ['ctrl-space', 'ctrl-left', 'ctrl-right'];

/** tmux's own spellings (its key-string.c table) where they are not the name with a capital. */
const TMUX_SPELLS: Readonly<Record<string, string>> = {
  'shift-tab': 'BTab',
  backspace: 'BSpace',
  delete: 'DC',
  insert: 'IC',
  pageup: 'PPage',
  pagedown: 'NPage',
};
const capital = (name: string): string => TMUX_SPELLS[name] ?? `${name[0]!.toUpperCase()}${name.slice(1)}`;

/** Every name tether takes, with the tmux key it must become. */
const EXPECTED: readonly [name: string, tmux: string][] = [
  ...[...NAMED, ...MOVES].map((n): [string, string] => [n, capital(n)]),
  ...Array.from({ length: 12 }, (_, i): [string, string] => [`f${i + 1}`, `F${i + 1}`]),
  ...Array.from('abcdefghijklmnopqrstuvwxyz', (c): [string, string] => [`ctrl-${c}`, `C-${c}`]),
  ...CTRL_NAMED.map((n): [string, string] => [n, `C-${capital(n.slice(5))}`]),
];

describe('resolveKey', () => {
  it.each(EXPECTED)('%s -> tmux %s', (name, key) => {
    expect(resolveKey(name)).toEqual({ kind: 'tmux', key });
  });

  it.each([
    ['ENTER', 'Enter'],
    ['Shift-Tab', 'BTab'],
    ['Ctrl-C', 'C-c'],
    ['PageUp', 'PPage'],
  ])('%s, in any case, -> tmux %s', (name, key) => {
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
    expect([...KEY_NAMES].sort()).toEqual([...EXPECTED.map(([name]) => name), 'alt-<char>'].sort());
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
