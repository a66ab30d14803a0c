/**
 * pi with tether: the extension and `--tether` after the configured arguments (last: pi's
 * boolean extension flags take the next word as their value; a wrapper script with
 * `kind = "pi"` must pass its arguments on), and a restored session's pi reopening its
 * conversation (`--session <file>`, before tether's own arguments). docs/agents.md "pi".
 */

/** pi's argv with the tether extension. */
export function piArgv(argv: readonly string[], extension: string, sessionFile: string | null): string[] {
  return [...argv, ...(sessionFile ? ['--session', sessionFile] : []), '-e', extension, '--tether'];
}
