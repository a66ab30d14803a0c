/** The reference client: what a tether client must do, in TypeScript (see docs/client.md). */
export {
  SessionStream,
  type SessionStreamOptions,
  type SessionStreamEvents,
  type StreamStatus,
  type StateFrame,
  type SessionMetaFrame,
  type ErrorFrame,
  type AnsweredFrame,
} from './session-stream.js';
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
