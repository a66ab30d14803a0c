/**
 * A hook program's input: the JSON the agent writes on its stdin for one hook event, read whole
 * up to a bound (a tool's input, a file being written, can be large).
 *
 * Invariants: never throws (a stdin that fails ends the read with what came); keeps at most
 * MAX_HOOK_INPUT_BYTES, however much the agent writes; imports nothing.
 */

/** Most stdin kept: the fields tether reads come first or are short. */
export const MAX_HOOK_INPUT_BYTES = 16 * 1024 * 1024;

/** This process's stdin up to its end (or its error), cut to about `maxBytes`. */
export function readHookInput(maxBytes = MAX_HOOK_INPUT_BYTES): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (chunk: Buffer) => {
      if (size < maxBytes) parts.push(chunk);
      size += chunk.length;
    });
    process.stdin.on('end', () => resolve(Buffer.concat(parts)));
    process.stdin.on('error', () => resolve(Buffer.concat(parts)));
  });
}
