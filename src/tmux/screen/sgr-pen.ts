/**
 * The SGR pen: the colours and attributes the next printed character gets, as the parameter
 * texts of the `CSI ... m` sequences that set them. The stream's tracker (term-state.ts) follows
 * it, and a snapshot carries it across the lines of a `capture-pane -e` replay.
 *
 * Invariant: each attribute slot holds the last parameter text that set it, so `toSgr()` is one
 * sequence that sets this pen from any state.
 */

/** Attribute slots of the pen; each holds the SGR parameter text that set it. */
type Slot = 'intensity' | 'italic' | 'underline' | 'blink' | 'inverse' | 'hidden' | 'strike' | 'overline' | 'fg' | 'bg' | 'ul';

/** Which slot a plain SGR code sets (or clears, with null). */
const CODE_SLOTS: Record<number, [Slot, boolean]> = {
  1: ['intensity', true],
  2: ['intensity', true],
  3: ['italic', true],
  4: ['underline', true],
  5: ['blink', true],
  6: ['blink', true],
  7: ['inverse', true],
  8: ['hidden', true],
  9: ['strike', true],
  21: ['underline', true],
  22: ['intensity', false],
  23: ['italic', false],
  24: ['underline', false],
  25: ['blink', false],
  27: ['inverse', false],
  28: ['hidden', false],
  29: ['strike', false],
  39: ['fg', false],
  49: ['bg', false],
  53: ['overline', true],
  55: ['overline', false],
  59: ['ul', false],
};

/** The SGR pen: what the next printed character looks like. */
export class SgrPen {
  private slots = new Map<Slot, string>();

  /** Applies the parameter string of one `CSI <params> m`. */
  apply(params: string): void {
    if (params === '') {
      this.slots.clear();
      return;
    }
    const parts = params.split(';');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (p.includes(':')) {
        // ITU form with sub-parameters: 4:3 (curly underline), 38:2::r:g:b, 58:5:n.
        const code = Number(p.slice(0, p.indexOf(':')));
        if (code === 38) this.slots.set('fg', p);
        else if (code === 48) this.slots.set('bg', p);
        else if (code === 58) this.slots.set('ul', p);
        else if (code === 4) {
          if (p === '4:0') this.slots.delete('underline');
          else this.slots.set('underline', p);
        }
        continue;
      }
      const code = p === '' ? 0 : Number(p);
      if (code === 0) this.slots.clear();
      else if (code === 38 || code === 48 || code === 58) {
        // xterm form: 38;5;n or 38;2;r;g;b consumes the following parameters.
        const slot: Slot = code === 38 ? 'fg' : code === 48 ? 'bg' : 'ul';
        const kind = parts[i + 1];
        const take = kind === '5' ? 2 : kind === '2' ? 4 : 0;
        if (take === 0) break; // malformed: the rest of the sequence is unreadable (as in xterm)
        this.slots.set(slot, parts.slice(i, i + 1 + take).join(';'));
        i += take;
      } else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) this.slots.set('fg', p);
      else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) this.slots.set('bg', p);
      else {
        const entry = CODE_SLOTS[code];
        if (!entry) continue;
        const [slot, on] = entry;
        if (!on) this.slots.delete(slot);
        else if (slot === 'intensity' && this.slots.get('intensity') !== p && this.slots.has('intensity')) {
          // Bold and dim can both be on; keep both codes in the one slot.
          this.slots.set('intensity', '1;2');
        } else this.slots.set(slot, p);
      }
    }
  }

  reset(): void {
    if (this.slots.size > 0) this.slots.clear();
  }

  get isDefault(): boolean {
    return this.slots.size === 0;
  }

  /** The one sequence that sets this pen from any state: `ESC[0;...m`. */
  toSgr(): string {
    if (this.slots.size === 0) return '\x1b[0m';
    return `\x1b[0;${[...this.slots.values()].join(';')}m`;
  }

  clone(): SgrPen {
    const copy = new SgrPen();
    copy.slots = new Map(this.slots);
    return copy;
  }
}
