/** The fields of Codex's notify JSON tether's notify program passes on (Codex's names); nothing else leaves it. */
export const CODEX_NOTIFY_FIELDS: readonly string[] = ['type', 'thread-id', 'turn-id', 'cwd', 'last-assistant-message'];
/** The flag, on tether's notify program's command line, before `true` or `false`: Codex's rate-limit dialog turned off or on by its command line (launch.ts). */
export const NUDGE_HIDDEN_FLAG = '--nudge-hidden';
/** The field the notify program reports it in (rate-limit-nudge.ts). */
export const NUDGE_HIDDEN_FIELD = 'nudge-hidden';
