/**
 * What the Live Activity shows (docs/push.md "Live Activity"): the summary of every session
 * folded into the content-state the iOS widget decodes, field by field, and the alert of a
 * change that needs the human (a new ask, a stop whose kind's meaning says it does:
 * stop-meanings.ts).
 *
 * Invariants: the content-state always has every field the contract names, optional ones only
 * where it says so; its words are cut (MAX_WORDS_CHARS, less when the payload would pass 4 KB);
 * the most urgent session is chosen by a fixed order (asks, stops, working, waiting, idle), the
 * most recent change first within one kind, so the same summary always gives the same card.
 */

import type { Stop, StopKind } from '../protocol/stop.js';
import { cutText } from '../protocol/text.js';
import { STOP_MEANINGS } from './stop-meanings.js';

/** The agent states, as the agent hub reports them. */
export type AgentStateName = 'thinking' | 'tool' | 'idle' | 'awaiting-input';

/** Why an agent stopped (the stop beside its state, docs/api.md "Stops"): what the card uses of it. */
export type SessionStop = Pick<Stop, 'id' | 'kind' | 'message' | 'resetsAt' | 'exitCode' | 'signal'>;

/** One session as the summary holds it. */
export interface SessionSummary {
  readonly sessionId: string;
  readonly name: string;
  /** The agent's label (`Claude`, `Codex`, `pi`). */
  readonly agent: string;
  readonly state: AgentStateName;
  /** The ask the agent waits on: its id and the command or question. */
  readonly ask?: { readonly id: string; readonly concern: string };
  readonly stop?: SessionStop;
  /** The binding usage window of its agent's account (docs/api.md "Usage"), when the agent reported its windows. */
  readonly usage?: { readonly window: string; readonly usedPercent: number; readonly resetsAt?: string };
  /** When its state last changed (ms): the newest change comes first among equals. */
  readonly changedAt: number;
}

/** The card's state for the widget: the contract of docs/push.md "Live Activity", field by field. */
export interface ActivityContentState {
  readonly working: number;
  readonly waiting: number;
  readonly stopped: number;
  readonly sessionId: string;
  readonly name: string;
  readonly agent: string;
  /** The most urgent session: `asking`, `stopped`, `working`, `waiting`, `idle`; `none` without sessions. */
  readonly state: 'asking' | 'stopped' | 'working' | 'waiting' | 'idle' | 'none';
  /** The ask, or why it stopped, in a few words; '' when neither. */
  readonly words: string;
  /** An ask, or a stop that needs the person (its kind's meaning: not the end of a turn, nor a clean exit). */
  readonly needsYou: boolean;
  /** The stop's kind, when the session stopped. */
  readonly stop?: StopKind;
  /** A usage limit's reset, Unix seconds, when the agent says. */
  readonly resetsAt?: number;
  /** The binding usage window of the card's session's agent: its name (`five_hour`), when the agent reported its windows. */
  readonly usageWindow?: string;
  /** That window's used percent, 0 to 100. */
  readonly usagePercent?: number;
  /** That window's reset, Unix seconds, when the agent said. */
  readonly usageResetsAt?: number;
}

/** The words of an ask or a stop are cut to this many characters. */
export const MAX_WORDS_CHARS = 120;
/** A session's name and an agent's label in the card are cut to these. */
const MAX_NAME_CHARS = 64;
const MAX_AGENT_CHARS = 32;

/** A stop that needs the human, as its kind's meaning says (not the end of a turn, nor a clean exit). */
const isUrgentStop = (stop: SessionStop | undefined): stop is SessionStop => stop !== undefined && STOP_MEANINGS[stop.kind].urgent(stop);
const isWorking = (s: SessionSummary): boolean => (s.state === 'thinking' || s.state === 'tool') && s.ask === undefined;

/** How urgent a session is: the higher, the sooner it is the card's. */
function rank(s: SessionSummary): number {
  if (s.ask !== undefined) return 4;
  if (isUrgentStop(s.stop) && !isWorking(s)) return 3;
  if (isWorking(s)) return 2;
  return s.state === 'awaiting-input' ? 1 : 0;
}
const STATE_OF_RANK = ['idle', 'waiting', 'working', 'stopped', 'asking'] as const;

/** The session the card is about, or null when there is none. */
export function mostUrgent(sessions: readonly SessionSummary[]): SessionSummary | null {
  let best: SessionSummary | null = null;
  for (const s of sessions) {
    if (best === null || rank(s) > rank(best) || (rank(s) === rank(best) && s.changedAt > best.changedAt)) best = s;
  }
  return best;
}

/** `text` on one line (runs of white space made one space), cut to `max` characters. */
function cut(text: string, max: number): string {
  return cutText(text.replace(/\s+/g, ' ').trim(), max);
}

/** The ask's or the stop's words, uncut. */
function wordsOf(s: SessionSummary): string {
  if (s.ask !== undefined) return s.ask.concern;
  if (isUrgentStop(s.stop) && !isWorking(s)) return s.stop.message !== '' ? s.stop.message : STOP_MEANINGS[s.stop.kind].fallbackWords;
  return '';
}

/** The content-state of a summary; `maxWords` cuts the words shorter when a payload must shrink. */
export function contentStateOf(sessions: readonly SessionSummary[], maxWords = MAX_WORDS_CHARS): ActivityContentState {
  const working = sessions.filter(isWorking).length;
  const stopped = sessions.filter((s) => s.ask === undefined && isUrgentStop(s.stop) && !isWorking(s)).length;
  const waiting = sessions.length - working - stopped - sessions.filter((s) => rank(s) === 0).length;
  const top = mostUrgent(sessions);
  if (top === null) return { working, waiting, stopped, sessionId: '', name: '', agent: '', state: 'none', words: '', needsYou: false };
  const r = rank(top);
  const stop = r === 3 ? top.stop : undefined;
  const resetsAt = stop?.resetsAt !== undefined ? Math.floor(Date.parse(stop.resetsAt) / 1000) : NaN;
  return {
    working,
    waiting,
    stopped,
    sessionId: top.sessionId,
    name: cut(top.name, MAX_NAME_CHARS),
    agent: cut(top.agent, MAX_AGENT_CHARS),
    state: STATE_OF_RANK[r]!,
    words: cut(wordsOf(top), maxWords),
    needsYou: r >= 3,
    ...(stop !== undefined ? { stop: stop.kind } : {}),
    ...(Number.isFinite(resetsAt) ? { resetsAt } : {}),
    ...usageFields(top.usage),
  };
}

/** The content-state's usage fields of a session's binding window (none without one). */
function usageFields(usage: SessionSummary['usage']): Pick<ActivityContentState, 'usageWindow' | 'usagePercent' | 'usageResetsAt'> {
  if (usage === undefined) return {};
  const resets = usage.resetsAt !== undefined ? Math.floor(Date.parse(usage.resetsAt) / 1000) : NaN;
  return {
    usageWindow: cut(usage.window, MAX_AGENT_CHARS),
    usagePercent: usage.usedPercent,
    ...(Number.isFinite(resets) ? { usageResetsAt: resets } : {}),
  };
}

/** The ids of what needs the human now (open asks, urgent stops): each alerts once. */
export function urgentIds(sessions: readonly SessionSummary[]): string[] {
  const ids: string[] = [];
  for (const s of sessions) {
    if (s.ask !== undefined) ids.push(`ask:${s.ask.id}`);
    else if (isUrgentStop(s.stop) && !isWorking(s)) ids.push(`stop:${s.stop.id}`);
  }
  return ids;
}

/**
 * The alert of a card that needs the human, or of a start: what lights the screen. `stop` is the
 * card's session's: its title is the one its kind's push has (stop-meanings.ts).
 */
export function alertOf(
  content: ActivityContentState,
  stop: SessionStop | undefined,
  maxWords = MAX_WORDS_CHARS,
): { title: string; body: string } {
  const words = cut(content.words, maxWords);
  switch (content.state) {
    case 'asking':
      return { title: `${content.agent} asks you`, body: `${content.name}: ${words}` };
    case 'stopped':
      return {
        title: stop !== undefined ? STOP_MEANINGS[stop.kind].title(content.agent, stop) : `${content.agent} stopped`,
        body: words !== '' ? `${content.name}: ${words}` : content.name,
      };
    case 'working':
      return { title: `${content.agent} is working`, body: content.name };
    default:
      return { title: `${content.agent || 'tether'}`, body: content.name };
  }
}
