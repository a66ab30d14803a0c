/** The Claude Code hook input fields tether's hook program passes on (Claude's documented names); nothing else leaves the hook. */
export const CLAUDE_HOOK_FIELDS: readonly string[] = [
  'hook_event_name',
  'session_id',
  'cwd',
  'source',
  'prompt',
  'tool_name',
  'tool_use_id',
  'notification_type',
  'message',
  'reason',
];
