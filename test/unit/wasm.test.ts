import { describe, expect, it } from 'vitest';
import { staleWasmModules } from '../../scripts/wasm.js';

describe('src/tmux/control/wasm', () => {
  it('the committed modules are what their .wat sources compile to', async () => {
    expect(await staleWasmModules()).toEqual([]);
  });
});
