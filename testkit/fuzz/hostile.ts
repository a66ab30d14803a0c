/**
 * Hostile text: what a peer types to make a shell, tmux's command parser or tmux's formats run
 * something, or a path escape its folder. The canaries among it would each leave a marker file
 * in a folder of the fuzzer's if anything ever ran them; the fuzzer checks that the folder stays
 * empty.
 */
import fc from 'fast-check';

/** The canaries for `dir` (an absolute path without spaces): each would create a file in it if run. */
export function canaries(dir: string): readonly string[] {
  const mark = (n: string) => `${dir}/${n}`;
  return [
    `$(touch ${mark('shell-subst')})`,
    `\`touch ${mark('backtick')}\``,
    `; touch ${mark('shell-seq')}`,
    `&& touch ${mark('shell-and')}`,
    `| touch ${mark('shell-pipe')}`,
    `\ntouch ${mark('shell-newline')}\n`,
    `;run-shell "touch ${mark('tmux-run-shell')}"`,
    ` ; run-shell -b 'touch ${mark('tmux-run-shell-b')}' ;`,
    `\\; run-shell "touch ${mark('tmux-escaped-seq')}"`,
    `#(touch ${mark('tmux-format-shell')})`,
    `#{run-shell:touch ${mark('tmux-format-run')}}`,
    `'$(touch ${mark('quoted-subst')})'`,
    `"; touch ${mark('dq-seq')}; "`,
    `\${IFS}touch\${IFS}${mark('ifs')}`,
    // Options git would take if a value reached its argv before `--`.
    `--output=${mark('git-output')}`,
    `--upload-pack=touch ${mark('git-upload-pack')}`,
    `-o${mark('git-o')}`,
  ];
}

/** Text that must arrive as itself: format and command look-alikes, escapes, paths, odd code points. */
export const HOSTILE_TEXT: readonly string[] = [
  ';',
  '; kill-server',
  '\\;',
  '#{pane_id}',
  '#{session_name}',
  '#{?pane_dead,dead,alive}',
  '##',
  '#[fg=red]',
  '$HOME',
  '${HOME}',
  '~',
  '~root',
  '../../../../etc/passwd',
  '..',
  '.',
  '/',
  '//',
  '%2e%2e%2f',
  '%00',
  '\u0000',
  'a\u0000b',
  '\n',
  '\r\n',
  '\r',
  '\t',
  '\x1b]0;pwned\x07',
  '\x1b[201~',
  '\x1b[200~',
  '\x1bP+q\x1b\\',
  '\x7f',
  '\u0085',
  '\u2028',
  '\u202e',
  '\ufeff',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '-t',
  '--',
  '-h',
  '=',
  ':',
  'C-c',
  'Enter',
  '^C',
  '"',
  "'",
  '`',
  '\\',
  '{}',
  '__proto__',
  'constructor',
  ' ',
  '',
];

/** Hostile strings for `dir`'s canaries, as an arbitrary: the lists above, random text, and long text. */
export function hostileString(dir: string): fc.Arbitrary<string> {
  const known = fc.constantFrom(...HOSTILE_TEXT, ...canaries(dir));
  return fc.oneof(
    { weight: 6, arbitrary: known },
    { weight: 2, arbitrary: fc.tuple(known, fc.string({ maxLength: 8 }), known).map(([a, b, c]) => a + b + c) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: 'grapheme' }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(known, fc.constantFrom(255, 256, 1024, 4097, 65_537))
        .map(([k, n]) => (k || 'x').repeat(Math.ceil(n / Math.max(1, k.length))).slice(0, n)),
    },
  );
}
