/**
 * What `tether service install` writes so the daemon starts at login (docs/service.md): a
 * systemd user unit on Linux, a launchd agent on macOS. Pure: paths, the node binary and the
 * environment are passed in, and the file's text comes out.
 *
 * Invariants: every value is escaped for the format it lands in (systemd's command-line and
 * `Environment=` quoting, with `%` and `$` doubled; XML for the plist), so a path with spaces,
 * quotes, `%`, `$` or `#` reaches the daemon as it is; and every file carries MARKER, which is how
 * `uninstall` knows a file is one tether wrote.
 */
import { join } from 'node:path';
import { NO_STDERR_LOG_FLAG } from '../config/daemon-process.js';

/** The first line of every file tether writes here; `uninstall` removes only files that have it. */
export const MARKER = 'Written by `tether service install`; `tether service uninstall` removes it.';
export const SYSTEMD_UNIT_NAME = 'tether.service';
export const LAUNCHD_LABEL = 'dev.tether.daemon';

/** The daemon's command line and the environment it needs, as the launchers start it. */
export interface DaemonLaunch {
  /** Absolute path of the node binary. */
  readonly node: string;
  /** node's flags (the launchers' DAEMON_NODE_ARGS). */
  readonly nodeArgs: readonly string[];
  /** Absolute path of tether's CLI script. */
  readonly cli: string;
  /** Variables the daemon needs (PATH, so tmux is found; TETHER_* when set at install). */
  readonly env: Readonly<Record<string, string>>;
}

export type ServicePlatform = 'systemd' | 'launchd';

/**
 * The unit's line that keeps tmux alive: on stop (and after a crash) systemd signals the daemon
 * only, not the rest of its control group, where a tmux server the daemon started may live.
 */
export const KEEPS_TMUX_SYSTEMD = 'KillMode=process';

/**
 * Null when an installed file keeps tmux running when the daemon stops, else what is missing
 * (files written before tether set it do not).
 */
export function missingProtection(platform: ServicePlatform, text: string): string | null {
  if (platform === 'systemd') return /^KillMode=process\s*$/m.test(text) ? null : KEEPS_TMUX_SYSTEMD;
  return /<key>AbandonProcessGroup<\/key>\s*<true\/>/.test(text) ? null : 'AbandonProcessGroup';
}

/** Where the file goes: `$XDG_CONFIG_HOME/systemd/user/` (default `~/.config`), `~/Library/LaunchAgents/`. */
export function serviceFile(platform: ServicePlatform, env: NodeJS.ProcessEnv, home: string): string {
  if (platform === 'launchd') return join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  const xdg = env.XDG_CONFIG_HOME;
  const config = xdg && xdg.startsWith('/') ? xdg : join(home, '.config');
  return join(config, 'systemd', 'user', SYSTEMD_UNIT_NAME);
}

/** One word of a systemd command line or `Environment=` value: quoted, `\` and `"` escaped, `%` and `$` doubled. */
export function systemdWord(word: string): string {
  if (/[\n\r\0]/.test(word)) throw new Error('a value for the unit cannot hold a line break or NUL');
  const escaped = word.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('%', '%%').replaceAll('$', '$$$$');
  return `"${escaped}"`;
}

/** The systemd user unit. */
export function systemdUnit(launch: DaemonLaunch, logFile: string): string {
  const command = [launch.node, ...launch.nodeArgs, launch.cli, 'serve'].map(systemdWord).join(' ');
  const env = Object.entries(launch.env)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`)}`);
  return [
    `# ${MARKER}`,
    `# Logs: journalctl --user -u ${SYSTEMD_UNIT_NAME}, and the daemon's own ${systemdComment(logFile)}`,
    '[Unit]',
    "Description=tether: your coding agent's terminal on your phone",
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${command}`,
    ...env,
    'Restart=on-failure',
    'RestartSec=5',
    '# A stop, a restart or a crash ends the daemon only: tmux and the agents keep running.',
    KEEPS_TMUX_SYSTEMD,
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** A value inside a `#` comment line: nothing that could end the line. */
function systemdComment(text: string): string {
  return text.replace(/[\n\r\0]/g, '?');
}

function xml(text: string): string {
  if (/[\0]/.test(text)) throw new Error('a value for the plist cannot hold NUL');
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** The launchd agent's property list. */
export function launchdPlist(launch: DaemonLaunch, logFile: string): string {
  // Its stdout and stderr go to a file that is never rotated: log lines stay in the log file only.
  const args = [launch.node, ...launch.nodeArgs, launch.cli, 'serve', NO_STDERR_LOG_FLAG].map((a) => `    <string>${xml(a)}</string>`);
  const env = Object.entries(launch.env)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([k, v]) => [`    <key>${xml(k)}</key>`, `    <string>${xml(v)}</string>`]);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    `<!-- ${MARKER} -->`,
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${LAUNCHD_LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args,
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...env,
    '  </dict>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    // launchd would otherwise kill what is left in the job's process group when the daemon exits.
    '  <key>AbandonProcessGroup</key>',
    '  <true/>',
    '  <key>StandardOutPath</key>',
    `  <string>${xml(logFile)}</string>`,
    '  <key>StandardErrorPath</key>',
    `  <string>${xml(logFile)}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
