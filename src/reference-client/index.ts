/** The reference client: what a tether client must do, in TypeScript (see docs/client.md). */
export { SessionStream } from './session-stream.js';
export type {
  SessionStreamOptions,
  SessionStreamEvents,
  StreamStatus,
  StateFrame,
  SessionMetaFrame,
  ErrorFrame,
  AnsweredFrame,
  PromptFrame,
  PromptRecord,
} from './stream-types.js';
export { SentPrompt, PromptError, PROMPT_REFUSALS, isDecided, type PromptOptions, type SentPromptEvents } from './prompt-outbox.js';
export { BracketedPasteTracker } from './paste-mode.js';
export { pinnedTlsOptions, pinnedOptions, normalizeFingerprint, PinMismatchError, type PinnedTlsOptions } from './pinning.js';
export {
  WorkbenchClient,
  WorkbenchError,
  type WorkbenchOptions,
  type Upload,
  type HistoryPage,
  type SearchMatch,
  type SearchAnswer,
} from './workbench.js';
