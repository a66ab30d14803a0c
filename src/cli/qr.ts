/**
 * The pairing QR code in a terminal: Unicode half blocks (two modules a character, so it fits an
 * SSH window), drawn in explicit colours so it reads the same on dark and light terminals.
 *
 * qrcode-terminal's small mode draws light modules as blocks and leaves dark ones as spaces,
 * which is right only on a dark background. Here every line is painted bright white on black
 * (blocks light, spaces dark) and framed by a quiet zone of light modules, so the code is dark
 * on light whatever the terminal's own colours are.
 */
import qrcode from 'qrcode-terminal';

/** Light modules added on each side, beyond qrcode-terminal's own one-module border. */
const QUIET_COLUMNS = 3;
/** Lines of light modules above and below (each line is two modules). */
const QUIET_LINES = 1;
/** Bright white foreground on a black background, and back to the terminal's own. */
export const QR_COLOURS = '\x1b[97;40m';
export const QR_RESET = '\x1b[0m';

/** The code as terminal lines (without colours): '█' light, ' ' dark, '▀'/'▄' light on top/bottom. */
export function qrBlocks(text: string): string[] {
  let out = '';
  qrcode.generate(text, { small: true }, (s) => (out = s));
  const lines = out.split('\n').filter((l) => l !== '');
  const width = Math.max(...lines.map((l) => [...l].length));
  const full = '█'.repeat(width + 2 * QUIET_COLUMNS);
  const side = '█'.repeat(QUIET_COLUMNS);
  const framed = lines.map((l) => side + l.padEnd(width, '█') + side);
  return [...Array<string>(QUIET_LINES).fill(full), ...framed, ...Array<string>(QUIET_LINES).fill(full)];
}

/** The code, ready to print: each line in its colours, reset at its end. */
export function renderQr(text: string): string {
  return qrBlocks(text)
    .map((l) => `${QR_COLOURS}${l}${QR_RESET}\n`)
    .join('');
}
