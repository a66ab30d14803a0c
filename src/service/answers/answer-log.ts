/**
 * The record of every answer (docs/api.md "Asks", docs/operations.md): one JSON line per answer
 * in `<data dir>/answers.log`: who answered (the device's token name, or `terminal`), the session,
 * the agent, the ask's kind and what it concerned, the choice, when, and whether the agent was
 * seen to take it. `tether status` and `/ops` show the last ones.
 *
 * Invariants: the file is 0600 and never larger than about MAX_ANSWER_LOG_BYTES (past it, the
 * older half is dropped, atomically); writes are queued, one at a time, and a failing write is
 * logged and never fails an answer; nothing a client sent is written but the choice id it picked.
 */
import { appendFile, chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { storeFailure } from '../../errors.js';
import { writeAtomic } from '../../files.js';
import type { Logger } from '../../log.js';
import { DATA_DIR_NAMES } from '../../config/data-layout.js';

/** Past this size the log keeps only its newer half. */
export const MAX_ANSWER_LOG_BYTES = 256 * 1024;
/** Entries `tether status` and `/ops` show. */
export const SHOWN_ANSWERS = 20;

/** One answer, as the log keeps it. */
export interface AnswerEntry {
  /** When it was answered (ISO 8601). */
  readonly at: string;
  readonly session: string;
  /** The agent's kind. */
  readonly agent: string;
  readonly ask: string;
  readonly kind: string;
  readonly tool?: string;
  readonly concern: string;
  /** The choice's id and label, or null when the terminal answered and the agent did not say what. */
  readonly choice: string | null;
  readonly label: string | null;
  /** The device (token) name that answered, or `terminal`. */
  readonly by: string;
  /** Whether the agent was seen to take it. */
  readonly landed: boolean;
}

/** The log file in a data dir. */
export function answerLogPath(dataDir: string): string {
  return join(dataDir, DATA_DIR_NAMES.answersLog);
}

export class AnswerLog {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  /** Appends one entry (queued behind earlier ones). */
  append(entry: AnswerEntry): Promise<void> {
    this.queue = this.queue
      .then(() => this.write(`${JSON.stringify(entry)}\n`))
      .catch((err: Error) => {
        this.log.warn({ err: err.message, path: this.path }, 'an answer could not be written to the answer log');
      });
    return this.queue;
  }

  private async write(line: string): Promise<void> {
    await appendFile(this.path, line, { mode: 0o600 });
    // A file made earlier with a looser mode (by hand) is made private again.
    await chmod(this.path, 0o600);
    if ((await stat(this.path)).size <= MAX_ANSWER_LOG_BYTES) return;
    const text = await readFile(this.path, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    writeAtomic(this.path, `${lines.slice(Math.floor(lines.length / 2)).join('\n')}\n`, storeFailure);
  }

  /** The last `n` entries, newest last (none when there is no log yet). */
  async last(n = SHOWN_ANSWERS): Promise<AnswerEntry[]> {
    await this.queue;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch {
      return [];
    }
    const out: AnswerEntry[] = [];
    for (const line of text.split('\n').slice(-(n + 1))) {
      if (line === '') continue;
      try {
        out.push(JSON.parse(line) as AnswerEntry);
      } catch {
        // A line cut by a crash mid-append: skipped.
      }
    }
    return out.slice(-n);
  }
}
