/**
 * The one error a config that cannot be used ends as, wherever the fault is (the file, a
 * `TETHER_*` variable, a value given on its own).
 *
 * Invariant: its message is one line, `<source>: <what is wrong>`.
 */

/**
 * A config that cannot be used. `message` is one line: `<source>: <what is wrong>`. Internal to
 * start-up (never a client's answer), and kept apart from DomainError because it carries where
 * the fault is (`source`, `key`, `line`) as fields a caller can point at, not only as words.
 */
export class ConfigError extends Error {
  /** The file path or environment variable at fault, or null for a bare value. */
  readonly source: string | null;
  /** The dotted key path (`buffer.session_cap_mb`), or null when no key is at fault. */
  readonly key: string | null;
  /** The line in the file, for syntax errors that know it. */
  readonly line: number | null;
  constructor(source: string | null, key: string | null, detail: string, line: number | null = null) {
    super(oneLine(source === null ? detail : `${source}: ${detail}`));
    this.name = 'ConfigError';
    this.source = source;
    this.key = key;
    this.line = line;
  }
}

/** Collapses any line breaks so the message stays one line. */
function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ');
}
