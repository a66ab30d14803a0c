/**
 * One agent kind as the agent-neutral core sees it: its adapter (docs/agents.md "Adding an
 * agent"). An adapter lives in its own folder (`src/agent/<kind>/`) and says how its program is
 * recognised, how its argv is built with tether's integration and how it reopens a conversation,
 * where its slash commands come from, how its reports become the agent-state machine's events,
 * what it asks the person and which keys pick each choice. The core holds the one list of
 * adapters (src/agent/contract/adapters.ts) and names no agent anywhere else (test/unit/adapters.test.ts).
 *
 * What a report means is a `HookOutcome`: the state events (in the names the agent-state
 * machine takes) and the facts it carries (the conversation id a restore reopens, the directory
 * the agent works in, a prompt for auto-naming, the question it waits on).
 */
import type { Logger } from '../../log.js';
import type { AskOpening } from '../asks/ask.js';
import type { SlashCommand } from './commands.js';
import type { EventMessage, ReportedCommand } from '../wire/extension-channel.js';
import type { StopReport } from './stops.js';
import type { UsageReport } from './usage.js';

/** What one report of an agent means. */
export interface HookOutcome {
  /** State events, in order (often one, none for an event that changes nothing). */
  readonly events: readonly EventMessage[];
  /** The agent ended (its session closed): no agent reports from the session any more. */
  readonly gone?: boolean;
  /** The agent's conversation id, reopened by a restore. */
  readonly conversation?: string;
  /** The directory the agent works in (where its project's commands are), as it reported it: the hub keeps only an absolute path with no control character. */
  readonly cwd?: string;
  /** A prompt the user submitted (counts for auto-naming). */
  readonly userMessage?: string;
  /** The agent's own title for its conversation (or its first prompt, when it titles none): names a session that has no description. */
  readonly title?: string;
  /** What the agent asks the user while it waits, in words only (said in the push). */
  readonly asks?: string;
  /** A question the agent put on screen, with its choices and the keys of each (docs/agents.md). */
  readonly ask?: AskOpening;
  /**
   * The open ask is over without an answer typed by tether: the agent moved on, or the person at
   * the terminal answered it (`answered`: what they picked, when the report says so).
   */
  readonly askEnded?: { readonly why: 'terminal' | 'moved-on'; readonly answered?: string };
  /** The agent stopped on a usage limit or an API error it gave up on (docs/agents.md "Stops"), after the events. */
  readonly stop?: StopReport;
  /** What the agent reported of its account's usage windows (docs/agents.md "Usage"). */
  readonly usage?: UsageReport;
}

/** An outcome that changes nothing. */
export const NO_OUTCOME: HookOutcome = { events: [] };

/** A state event, as the protocol writes it. */
export function stateEvent(event: EventMessage['event'], extra: Omit<EventMessage, 'type' | 'event'> = {}): EventMessage {
  return { type: 'event', event, ...extra };
}

/** What a launch continues: pi's conversation file, or another agent's conversation id. */
export interface AgentResume {
  readonly sessionFile?: string | null;
  /** The conversation id the agent reported, as its own resume option takes it. */
  readonly conversation?: string | null;
}

/** Where tether's own files are, for an adapter's argv. */
export interface LaunchContext {
  /** The node that runs tether's helper programs (`process.execPath`). */
  readonly node: string;
  /** tether's built tree (`dist/`): an adapter's helper programs are in `dist/agent/<kind>/`. */
  readonly distDir: string;
  /** What the adapter's `prepare` wrote for this daemon (a settings file), or null (not written: run without). */
  readonly prepared: string | null;
}

/** What an adapter's `prepare` is given: where tether's files are, and the daemon's environment (where the user's own agent files are). */
export interface PrepareContext extends Omit<LaunchContext, 'prepared'> {
  readonly env: NodeJS.ProcessEnv;
}

/** What an adapter's slash commands are made from. */
export interface CommandsContext {
  /** Where the session's agent works (its hooks' `cwd`, else the session's directory), or null. */
  readonly cwd: string | null;
  readonly env: NodeJS.ProcessEnv;
  /** The commands the agent reported itself (pi's extension), or null when it did not. */
  readonly reported: readonly ReportedCommand[] | null;
}

/** What the daemon gives an adapter's live part. */
export interface AdapterRuntime {
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => number;
  readonly log: Logger;
  /** Applies what the adapter read of a session's agent itself (a file it writes, a notice), as a report's outcome. */
  report(session: string, outcome: HookOutcome): void;
}

/** A notice the agent wrote to its terminal: an OSC string (`ESC ] <code> ; <text> BEL`), never screen content. */
export interface TerminalNotice {
  /** The OSC number (`9`, `7501`). */
  readonly code: number;
  /** What follows `<code>;`, cut to MAX_NOTICE_CHARS. */
  readonly text: string;
}

/** The daemon-side part of an adapter, started once per daemon. */
export interface AgentRunner {
  /** What one hook report placed in `session` means; `conversation` is the id the hub holds. */
  readHook?(session: string, fields: Readonly<Record<string, string>>, conversation: string | null): HookOutcome;
  /** The daemon linked to a session running this agent: its pane's directory, the conversation it is known by. */
  sessionSeen?(session: string, cwd: string | null, conversation: string | null): void;
  /** A notice the session's agent wrote to its terminal. */
  notice?(session: string, notice: TerminalNotice): void;
  /** The session was deleted. */
  forget?(session: string): void;
  stop?(): void;
}

/** One agent kind tether integrates with. */
export interface AgentAdapter {
  /** `[agent] kind` names it; also the `agent` of its hook reports and of its asks. */
  readonly kind: string;
  /** How a person calls it (push titles: "Claude asks to run Bash"). */
  readonly label: string;
  /** Its full name, for messages ("Claude Code"). */
  readonly product: string;
  /** The command that installs its program, said when it is missing ("npm install -g …"). */
  readonly install: string;
  /** Program file names `kind = "auto"` takes for it. */
  readonly programs: readonly string[];
  /** An installed package's CLI, for `auto`: where a link to the program leads. */
  readonly packageCli: RegExp;
  /** Variables of tether's environment that reach the agent's panes (and a login service). */
  readonly passedEnv: readonly string[];
  /** Whether its programs in a pane need the agent socket's path given (hook programs do; pi's extension finds it itself). */
  readonly needsSocketPath: boolean;
  /** The argv of a copy of the program tether ships, used when the configured one is not on PATH; null: none can run here. */
  bundled?(): string[] | null;
  /** The OSC numbers its program writes to its terminal that its runner's `notice` reads. */
  readonly notices?: readonly number[];
  /** Writes what its integration needs in the data dir (for the daemon, and for `tether attach`); returns it. Throws on I/O failure. */
  prepare?(dataDir: string, ctx: PrepareContext): string;
  /** Where `prepare` writes, known without writing (a daemon writes only once it holds its port). */
  preparedAt?(dataDir: string): string;
  /** The argv a session runs: the configured words, then tether's integration, then what reopens `resume`. */
  argv(argv: readonly string[], ctx: LaunchContext, resume: AgentResume): string[];
  /**
   * Variables its integration sets in the agent's pane, beside the passed ones: where `prepare`
   * wrote what the agent reads, or a plugin named in a variable the agent merges with the user's
   * own setting; `env` is the daemon's, where the user's own value of such a variable is.
   */
  env?(ctx: LaunchContext, env: NodeJS.ProcessEnv): Record<string, string>;
  /** Its slash commands (`GET /sessions/:id/commands`). */
  commands(ctx: CommandsContext): Promise<readonly SlashCommand[]> | readonly SlashCommand[];
  /** Starts its daemon-side part (reading its hooks, following its files, reading its notices). */
  start?(rt: AdapterRuntime): AgentRunner;
}
