/**
 * Codex's adapter (docs/agents.md "Codex"): tether's notify program set with `-c notify=[...]`
 * (which runs the user's own `notify` too; `~/.codex` is never edited), a thread reopened with
 * `codex … resume <thread id>`, its turns and its account's usage windows read from its rollout
 * file as they happen, its notify ending a turn, its approvals read from what it writes to its
 * terminal (asks.ts), its rate-limit dialog predicted from all three (rate-limit-nudge.ts), and
 * its built-in slash commands.
 */
import { join } from 'node:path';
import type { AgentAdapter, HookOutcome } from '../contract/adapter.js';
import { CodexApprovals } from './approvals.js';
import { CODEX_NOTIFY_OSC, CODEX_STATE_OSC } from './asks.js';
import { CODEX_BUILTIN_COMMANDS } from './commands.js';
import { readCodexNotify } from './events.js';
import { codexArgv } from './launch.js';
import { CodexRateLimitNudge } from './rate-limit-nudge.js';
import { codexSessionsDir } from './rollout.js';
import { CodexRolloutWatch } from './rollout-watch.js';

export const codexAdapter: AgentAdapter = {
  kind: 'codex',
  label: 'Codex',
  product: 'Codex',
  install: 'npm install -g @openai/codex',
  programs: ['codex'],
  packageCli: /[\\/]@openai[\\/]codex[\\/]bin[\\/]codex\.js$/,
  passedEnv: [],
  needsSocketPath: true,
  notices: [CODEX_NOTIFY_OSC, CODEX_STATE_OSC],
  argv: (argv, ctx, resume) => codexArgv(argv, [ctx.node, join(ctx.distDir, 'agent', 'codex', 'notify.js')], resume.conversation ?? null),
  // Codex 0.169 reads no custom commands: its built-ins are the list.
  commands: () => CODEX_BUILTIN_COMMANDS,
  start: (rt) => {
    const nudges = new CodexRateLimitNudge(rt);
    const rollouts = new CodexRolloutWatch({
      sessionsDir: codexSessionsDir(rt.env),
      now: rt.now,
      log: rt.log,
      report: (session, outcome) => rt.report(session, outcome),
      observe: (session, facts) => nudges.records(session, facts),
      followed: (session) => nudges.followed(session),
    });
    const approvals = new CodexApprovals({ ...rt, rollouts });
    return {
      // A notify ends the turn, unless the session's rollout file is followed: its own record of
      // the end is then read at once (a notify may come before the records of its turn).
      readHook: (session, fields, conversation): HookOutcome => {
        nudges.notified(session, fields);
        const outcome = readCodexNotify(fields, conversation);
        if (outcome.conversation !== undefined && rollouts.notified(session, outcome.conversation)) return { ...outcome, events: [] };
        return outcome;
      },
      sessionSeen: (session, cwd, conversation) => {
        nudges.seen(session);
        rollouts.watch(session, cwd, conversation);
      },
      notice: (session, notice) => {
        approvals.notice(session, notice);
        nudges.notice(session, notice);
      },
      forget: (session) => {
        rollouts.forget(session);
        approvals.forget(session);
        nudges.forget(session);
      },
      stop: () => rollouts.stop(),
    };
  },
};
