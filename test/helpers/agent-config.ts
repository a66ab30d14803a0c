/**
 * The daemon config the real-agent tests share: a plain shell as the default agent, one real
 * agent under `[agents.<kind>]` (its binary from test/agents), and push to the APNs stand-in.
 * It owns only the TOML text; each test keeps its own fake model, phone and waits.
 */
import { agentBin, type AgentName } from '../../testkit/agent-bins.js';
import { pushToml, type ApnsStandIns } from '../../testkit/apns-server.js';

/** The config text for `kind` run with `args` (none: the agent's own defaults), pushing to `apns`' sandbox. */
export function agentWithPushToml(kind: AgentName, args: readonly string[], apns: ApnsStandIns): string {
  return [
    '[agent]',
    'command = "/bin/sh"',
    'default_session = "shell-main"',
    `[agents.${kind}]`,
    `command = ${JSON.stringify(agentBin(kind))}`,
    `kind = "${kind}"`,
    ...(args.length > 0 ? [`args = ${JSON.stringify(args)}`] : []),
    ...pushToml(apns.sandbox.url, apns.keyPath),
    '',
  ].join('\n');
}

/** The same for the pi tether bundles, under `[agents.pi]` (no binary of its own: "pi" is found or the bundled one runs). */
export function piWithPushToml(apns: ApnsStandIns): string {
  const pi = ['[agents.pi]', 'command = "pi"', 'kind = "pi"'];
  return ['[agent]', 'command = "/bin/sh"', 'default_session = "shell-main"', ...pi, ...pushToml(apns.sandbox.url, apns.keyPath), ''].join(
    '\n',
  );
}

/** Claude Code 2.1.328 decides permissions by a classifier unless told otherwise. */
export const CLAUDE_ASKS = ['--permission-mode', 'default'] as const;
