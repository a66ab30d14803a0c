/**
 * The `%output` unescape in WebAssembly (src/tmux/control/wasm/unescape.wat): plain runs move 16 bytes
 * per step, where the JavaScript loop moves one to four. One instance per process; lines are
 * copied into its memory, decoded there, and copied out (both copies are native and cheap
 * next to the decode).
 */
import { UNESCAPE_WASM_BASE64 } from './wasm/unescape.js';

type UnescapeFn = (src: number, len: number, dst: number) => number;

/** The part of the WebAssembly API used here (the project's lib has no DOM types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PAGE = 64 * 1024;

class WasmUnescaper {
  private readonly memory: WasmMemory;
  private readonly fn: UnescapeFn;
  private view: Buffer;

  constructor() {
    const module = new wasm.Module(Buffer.from(UNESCAPE_WASM_BASE64, 'base64'));
    const instance = new wasm.Instance(module, {});
    this.memory = instance.exports.memory as WasmMemory;
    this.fn = instance.exports.unescape as UnescapeFn;
    this.view = Buffer.from(this.memory.buffer);
  }

  /** Decodes `src[start..end)` into `dst` at `at`; returns the decoded length. */
  unescapeInto(src: Buffer, start: number, end: number, dst: Buffer, at: number): number {
    const len = end - start;
    // The line at 0, the output after it (16-aligned), and room for the last whole 16-byte store.
    const out = (len + 15) & ~15;
    const need = out + len + 16;
    if (need > this.view.length) {
      this.memory.grow(Math.ceil((need - this.view.length) / PAGE));
      this.view = Buffer.from(this.memory.buffer);
    }
    src.copy(this.view, 0, start, end);
    const n = this.fn(0, len, out);
    this.view.copy(dst, at, out, out + n);
    return n;
  }
}

let shared: WasmUnescaper | null = null;

/** The process's WebAssembly unescaper, made on first use. */
export function wasmUnescaper(): WasmUnescaper {
  shared ??= new WasmUnescaper();
  return shared;
}
