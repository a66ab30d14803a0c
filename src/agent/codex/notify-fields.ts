/** The fields of Codex's notify JSON tether's notify program passes on (Codex's names); nothing else leaves it. */
export const CODEX_NOTIFY_FIELDS: readonly string[] = ['type', 'thread-id', 'turn-id', 'cwd', 'last-assistant-message'];
