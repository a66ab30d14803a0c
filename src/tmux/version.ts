/**
 * Which tmux we run: the client binary's `tmux -V` and the running server's `#{version}`.
 *
 * Invariant: every form tmux prints is parsed, and only a real release older than 3.0 (or text
 * that is not a tmux version at all) is refused.
 */
import { isNoServerError, TmuxCli } from './exec.js';
import type { TmuxTarget } from './target.js';

/** A parsed tmux version. `label` is the version as tmux printed it (`3.3a`, `next-3.4`, `master`). */
export interface TmuxVersion {
  readonly major: number;
  readonly minor: number;
  readonly label: string;
  /** A build from the development tree: `next-X.Y`, `X.Y-rcN`, `master`, `openbsd-X`. */
  readonly isDevelopment: boolean;
}

/**
 * The oldest tmux tether works with: input goes as `send-keys -H` and a session is created with
 * `new-window -e` (both tmux 3.0), and sized with `resize-window` (2.9). Older ones are refused
 * at start with one clear message rather than failing later with tmux's own.
 */
export const MIN_TMUX_VERSION = { major: 3, minor: 0 } as const;

/** `3.3a`, `next-3.4`, `2.6-rc2`, `2.6-rc`, `1.8`. */
const NUMBERED = /^(next-)?(\d+)\.(\d+)([a-z]?)(?:-rc(\d*))?$/;

/**
 * Parses `tmux -V` output (or a bare version such as `#{version}`); null when it is not a tmux
 * version. `master` and `openbsd-X` carry no tmux release number and are ranked above every
 * release: `master` is built from the development head, which is newer than any release, and
 * `openbsd-X` is the tmux in OpenBSD's base system, which *is* the upstream development tree
 * (tmux is developed in OpenBSD first) and names the OS release instead of a tmux release.
 * OpenBSD supports only its two latest releases, whose tmux is far past 3.0, and the optional
 * features tether uses are probed at run time anyway, so refusing these would only lock users out.
 */
export function parseTmuxVersion(text: string): TmuxVersion | null {
  const trimmed = text.trim();
  const label = trimmed.startsWith('tmux ') ? trimmed.slice(5).trim() : trimmed;
  if (label === 'master' || /^openbsd-\d+(?:\.\d+)*$/.test(label)) {
    return { major: Number.POSITIVE_INFINITY, minor: 0, label, isDevelopment: true };
  }
  const m = NUMBERED.exec(label);
  if (!m) return null;
  const isDevelopment = m[1] !== undefined || m[5] !== undefined;
  return { major: Number(m[2]), minor: Number(m[3]), label, isDevelopment };
}

/** Rank of what follows `X.Y` in a label: a pre-release sorts before the release, a letter after it. */
function suffixRank(v: TmuxVersion): number {
  const m = NUMBERED.exec(v.label);
  if (!m) return 0;
  if (m[1] !== undefined || m[5] !== undefined) return -1;
  return m[4] ? m[4].charCodeAt(0) - 96 : 0;
}

/** Orders versions: negative when `a` is older than `b`, 0 when equal, positive when newer. */
export function compareTmuxVersion(a: TmuxVersion, b: TmuxVersion): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  return Math.sign(suffixRank(a) - suffixRank(b));
}

/** Throws when `v` is older than the minimum, with the message the CLI prints as it is. */
export function checkTmuxVersion(v: TmuxVersion): void {
  const tooOld = v.major < MIN_TMUX_VERSION.major || (v.major === MIN_TMUX_VERSION.major && v.minor < MIN_TMUX_VERSION.minor);
  if (tooOld) {
    throw new Error(
      `tmux ${MIN_TMUX_VERSION.major}.${MIN_TMUX_VERSION.minor} or newer is required (send-keys -H, new-window -e), found ${v.label}`,
    );
  }
}

/** Runs `<bin> -V`; rejects when tmux cannot be run or prints something that is not a version. */
export async function readTmuxVersion(target: TmuxTarget): Promise<TmuxVersion> {
  // -V needs no server: the client answers it alone, so no socket arguments are passed.
  const { stdout } = await new TmuxCli({ bin: target.bin, socketArgs: [] }).run(['-V']);
  const text = stdout.toString('utf8').trim();
  const version = parseTmuxVersion(text);
  if (!version) throw new Error(`tmux -V printed something that is not a tmux version: ${JSON.stringify(text.slice(0, 80))}`);
  return version;
}

/** The running server's version (`#{version}`, tmux 2.4+), or null when no server runs. */
export async function readServerVersion(target: TmuxTarget): Promise<string | null> {
  try {
    const { stdout } = await new TmuxCli(target).run(['display-message', '-p', '#{version}']);
    return stdout.toString('utf8').replace(/\n$/, '');
  } catch (err) {
    if (isNoServerError(err)) return null;
    throw err;
  }
}
