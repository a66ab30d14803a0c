/**
 * Reads a QR code printed in a terminal the way a phone camera would see it: each character
 * cell drawn with the colours its escape sequences give (half blocks are two modules, top and
 * bottom), the terminal's own background around it, then decoded with jsQR.
 */
import jsQRModule, { type Options, type QRCode } from 'jsqr';

type Decode = (data: Uint8ClampedArray, width: number, height: number, options?: Options) => QRCode | null;
// jsqr is CommonJS with `exports.default`: under NodeNext its default import is the module object.
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ?? jsQRModule) as unknown as Decode;

const SCALE = 4;
type Colour = 'light' | 'dark';

/** The colour an SGR parameter list sets for foreground and background (30-37/90-97, 40-47/100-107). */
function applySgr(params: string, pen: { fg: Colour | null; bg: Colour | null }): void {
  for (const p of params.split(';').map(Number)) {
    if (p === 0) pen.fg = pen.bg = null;
    else if (p === 97 || p === 37) pen.fg = 'light';
    else if (p === 30 || p === 90) pen.fg = 'dark';
    else if (p === 47 || p === 107) pen.bg = 'light';
    else if (p === 40 || p === 100) pen.bg = 'dark';
  }
}

/**
 * The module grid of the printed lines. `terminal` is the theme: its default foreground and
 * background are what cells without explicit colours get.
 */
export function gridOf(text: string, terminal: 'dark' | 'light'): Colour[][] {
  const themeFg: Colour = terminal === 'dark' ? 'light' : 'dark';
  const themeBg: Colour = terminal === 'dark' ? 'dark' : 'light';
  const rows: Colour[][] = [];
  for (const line of text.split('\n')) {
    if (!/[█▀▄]/.test(line)) continue;
    const pen = { fg: null as Colour | null, bg: null as Colour | null };
    const top: Colour[] = [];
    const bottom: Colour[] = [];
    // eslint-disable-next-line no-control-regex -- escape sequences are what is parsed
    for (const m of line.matchAll(/\x1b\[([\d;]*)m|(.)/gsu)) {
      if (m[1] !== undefined) {
        applySgr(m[1], pen);
        continue;
      }
      const fg = pen.fg ?? themeFg;
      const bg = pen.bg ?? themeBg;
      const ch = m[2];
      top.push(ch === '█' || ch === '▀' ? fg : bg);
      bottom.push(ch === '█' || ch === '▄' ? fg : bg);
    }
    rows.push(top, bottom);
  }
  return rows;
}

/** Decodes the printed code on a terminal of the given theme; null when it does not read. */
export function decodeTerminalQr(text: string, terminal: 'dark' | 'light'): string | null {
  const grid = gridOf(text, terminal);
  const margin = 6;
  const h = grid.length + 2 * margin;
  const w = Math.max(...grid.map((r) => r.length)) + 2 * margin;
  const themeBg = terminal === 'dark' ? 0 : 255;
  const data = new Uint8ClampedArray(w * SCALE * h * SCALE * 4).fill(themeBg);
  for (let y = 0; y < grid.length; y++) {
    for (let x = 0; x < grid[y]!.length; x++) {
      const v = grid[y]![x] === 'light' ? 255 : 0;
      for (let dy = 0; dy < SCALE; dy++) {
        for (let dx = 0; dx < SCALE; dx++) {
          const i = (((y + margin) * SCALE + dy) * w * SCALE + (x + margin) * SCALE + dx) * 4;
          data[i] = data[i + 1] = data[i + 2] = v;
        }
      }
    }
  }
  for (let i = 3; i < data.length; i += 4) data[i] = 255;
  return jsQR(data, w * SCALE, h * SCALE, { inversionAttempts: 'dontInvert' })?.data ?? null;
}
