/**
 * Auto-naming (docs/agents.md "Auto-naming"): after the third user message in a session without a
 * description, one one-shot call of the agent's own CLI with the naming model (no tools, no
 * session, no extensions, no context files, no skills or templates, thinking off), stdin
 * closed, bounded in time; its 2-4 word answer becomes `@description`, marked automatic.
 *
 * Invariants: at most one call per session per daemon run, and none once the session has a
 * description or `@description-source` is set (`manual` by PATCH, `auto` after a success);
 * the description is re-checked right before it is stored, so a manual one set meanwhile
 * wins; the user's text travels as one argv element, never through a shell; a failure is
 * logged and changes nothing.
 */
import { execFile } from 'node:child_process';
import type { Logger } from '../../log.js';
import { replaceControlChars } from '../../protocol/text.js';
import type { TmuxCli } from '../../tmux/exec.js';
import { SESSION_OPTIONS } from '../../tmux/layout.js';
import { readUserOption, setUserOption } from '../../tmux/sessions/sessions.js';

/** User messages after which a session is named. */
export const AUTO_NAME_AFTER_MESSAGES = 3;
/** How long the naming call may take before it is killed. */
export const AUTO_NAME_TIMEOUT_MS = 60_000;
/** Most characters of each user message put into the naming prompt. */
const PROMPT_MESSAGE_CHARS = 600;
/** Most bytes of output read from the naming call. */
const MAX_OUTPUT_BYTES = 64 * 1024;
/** Longest description auto-naming stores. */
export const MAX_AUTO_DESCRIPTION_CHARS = 60;

export interface AutoNamerDeps {
  readonly cli: TmuxCli;
  /** The agent's argv without tether's extension (e.g. `[node, .../pi/dist/cli.js]`). */
  readonly command: readonly string[];
  /** `provider/model`; "" turns auto-naming off. */
  readonly model: string;
  /** Environment of the naming call (the daemon's: PATH, HOME, the agent's own variables). */
  readonly env: NodeJS.ProcessEnv;
  readonly log: Logger;
  readonly timeoutMs?: number;
  /** The description of a session was set: its clients get a new session-meta. */
  readonly described?: (session: string) => void;
}

/** The prompt of the naming call: an instruction, then the user messages. */
export function namingPrompt(messages: readonly string[]): string {
  const transcript = messages.map((m, i) => `Message ${i + 1}: ${m.slice(0, PROMPT_MESSAGE_CHARS).replace(/\s+/g, ' ').trim()}`).join('\n');
  return [
    'Give a title of 2 to 4 words to the coding session that starts with the user messages below.',
    'Answer with the title only: no quotes, no punctuation at the end, nothing else.',
    '',
    transcript,
  ].join('\n');
}

/** pi's argv for the one-shot naming call (after the agent's own argv). */
export function namingArgs(model: string, prompt: string): string[] {
  return [
    '--print',
    '--no-session',
    '--no-tools',
    '--no-extensions',
    '--no-skills',
    '--no-prompt-templates',
    '--no-context-files',
    '--no-themes',
    '--thinking',
    'off',
    '--model',
    model,
    // The prompt is one argv element; it starts with a letter, so pi never reads it as a flag or @file.
    prompt,
  ];
}

/** The title in the model's answer: its first line, cleaned, at most 4 words; null when empty. */
export function cleanTitle(output: string): string | null {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  if (!line) return null;
  const text = replaceControlChars(line)
    .replace(/^(title|name)\s*:\s*/i, '')
    .replace(/[*_`#]/g, '')
    .replace(/^["'\u201c\u2018]+|["'\u201d\u2019]+$/g, '')
    .replace(/[.!?:;,]+$/, '')
    .trim();
  const words = text.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return null;
  return words.slice(0, 4).join(' ').slice(0, MAX_AUTO_DESCRIPTION_CHARS).trim() || null;
}

export class AutoNamer {
  private readonly tried = new Set<string>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: AutoNamerDeps) {}

  /** A session's user messages so far: names it when it is time (fire and forget). */
  consider(session: string, first: readonly string[], count: number): void {
    if (this.deps.model === '' || count < AUTO_NAME_AFTER_MESSAGES || this.tried.has(session)) return;
    this.tried.add(session);
    const job = this.name(session, first.slice(0, AUTO_NAME_AFTER_MESSAGES)).catch((err: Error) =>
      this.deps.log.warn({ session, err: err.message }, 'auto-naming failed; the session keeps no description'),
    );
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }

  /**
   * The agent's own title for the session's conversation: stored as an automatic description
   * when the session has none and no one set one (no naming call; fire and forget). Each title is
   * looked at once per session; a later, different title of the agent's is not taken over the first.
   */
  adopt(session: string, title: string): void {
    const clean = cleanTitle(title);
    if (clean === null || this.tried.has(session)) return;
    this.tried.add(session);
    const job = this.store(session, clean).catch((err: Error) =>
      this.deps.log.warn({ session, err: err.message }, "the agent's title could not be kept; the session keeps no description"),
    );
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }

  /** Resolves once every naming call started so far has finished (for shutdown and tests). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Whether the session may be named now: no description and no one set one. */
  private async unnamed(session: string): Promise<boolean> {
    const [description, source] = await Promise.all([
      readUserOption(this.deps.cli, session, SESSION_OPTIONS.description),
      readUserOption(this.deps.cli, session, SESSION_OPTIONS.descriptionSource),
    ]);
    return (description ?? '') === '' && (source ?? '') === '';
  }

  private async name(session: string, messages: readonly string[]): Promise<void> {
    if (!(await this.unnamed(session))) {
      this.deps.log.info({ session }, 'auto-naming skipped: the session already has a description');
      return;
    }
    const output = await this.run(namingArgs(this.deps.model, namingPrompt(messages)));
    const title = cleanTitle(output);
    if (!title) throw new Error('the naming model gave no title');
    await this.store(session, title);
  }

  /** Stores `title` as the session's automatic description, unless one was set meanwhile. */
  private async store(session: string, title: string): Promise<void> {
    if (!(await this.unnamed(session))) return;
    await setUserOption(this.deps.cli, session, SESSION_OPTIONS.description, title);
    await setUserOption(this.deps.cli, session, SESSION_OPTIONS.descriptionSource, 'auto');
    this.deps.log.info({ session, description: title }, 'session named automatically');
    this.deps.described?.(session);
  }

  private run(args: string[]): Promise<string> {
    const [bin, ...pre] = this.deps.command;
    if (bin === undefined) return Promise.reject(new Error('no agent command'));
    const timeout = this.deps.timeoutMs ?? AUTO_NAME_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const child = execFile(
        bin,
        [...pre, ...args],
        { env: this.deps.env, timeout, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8', windowsHide: true },
        (err, stdout, stderr) => {
          if (err) {
            const why = err.killed ? `no answer within ${timeout} ms` : (stderr.trim().split('\n').pop() ?? err.message);
            reject(new Error(`the naming call failed: ${why.slice(0, 300)}`));
            return;
          }
          resolve(stdout);
        },
      );
      // Closed stdin: pi in print mode reads piped stdin to its end; it must see the end at once.
      child.stdin?.end();
    });
  }
}
