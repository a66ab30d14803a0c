/**
 * `capture-pane` over a control client without tmux keeping a copy of every capture.
 *
 * tmux 3.2 to 3.5a never free what `capture-pane -p` printed when the client is a control client
 * (cmd-capture-pane.c: the control-mode branch writes the text and returns without `free`; fixed
 * in 3.6, upstream commit 94bafa5). Every such capture stays in the tmux server until it exits: a
 * snapshot's 10,000 lines of history are about 0.85 MB, a visible screen a few KB. Measured on
 * 3.3a: 100 history captures grew the server by 14.5 MB, and the days soak's tmux server rose
 * 238 MB an hour at 12 sessions (docs/benchmarks.md "The tmux server").
 *
 * On those versions a capture goes through a named paste buffer instead, in one line of commands
 * (tmux runs a line's commands back to back, so the buffer exists only inside it and no person
 * or other client sees it): the buffer set to a placeholder, the capture into it, `show-buffer`,
 * `delete-buffer`. tmux frees all of that. A capture that fails (its pane gone) ends the line
 * before the delete, which then follows on its own. A capture that comes out empty (no
 * alternate screen, nothing pending) leaves the placeholder, which no real capture can be: a
 * capture of rows ends with a newline, and what is pending is never one plain character.
 *
 * Up to 3.3a `show-buffer` prints the text through `vis(3)` (`utf8_stravisx` with VIS_OCTAL |
 * VIS_CSTYLE | VIS_TAB, and `$` before a name escaped), which `unvis` reverses exactly; from 3.4
 * it prints the text as it is (`cmdq_print_data`). From 3.4 a paste buffer that changes also
 * notifies every control client (`%paste-buffer-changed`), and tmux before 3.7 crashes when a
 * notification reaches a control client in its handshake (src/tmux/topology-gate.ts): there the
 * line runs as a writer of the topology gate. From 3.6 on, `capture-pane -p` frees its text and
 * is used as it is.
 *
 * Invariant: whichever way, a capture's reply is what `capture-pane -p` answers (one trailing
 * newline dropped), and a failed capture is a failed reply with tmux's words.
 */
import type { ControlClient, ControlReply } from './control-client.js';
import { buildControlCommand } from './quote.js';
import { gateTimeout, topologyGate } from './topology-gate.js';
import { compareTmuxVersion, parseTmuxVersion, type TmuxVersion } from './version.js';

/** The paste buffer a capture passes through; it lives only within one line of commands. */
export const CAPTURE_BUFFER = 'tether-capture';
/** What the buffer holds before the capture: left there by a capture that is empty. */
const PLACEHOLDER = 'x';
/** How long a capture line may wait for the topology gate (tmux 3.4 to 3.5a). */
const CAPTURE_GATE_MS = 15_000;

/**
 * How a tmux server's captures are read: printed; through a buffer shown escaped (3.2 to 3.3a);
 * through a buffer shown as it is, behind the gate (3.4 to 3.5a).
 */
export type CaptureWay = 'print' | 'buffer' | 'gated-buffer';

const DELETE_LINE = buildControlCommand(['delete-buffer', '-b', CAPTURE_BUFFER]);

const [V3_2, V3_4, V3_6] = ['3.2', '3.4', '3.6'].map((label) => parseTmuxVersion(label)!) as [TmuxVersion, TmuxVersion, TmuxVersion];

/** The way for a server of version `v` (null: unknown, read as a current tmux). */
export function captureWayOf(v: TmuxVersion | null): CaptureWay {
  if (v === null || compareTmuxVersion(v, V3_2) < 0 || compareTmuxVersion(v, V3_6) >= 0) return 'print';
  return compareTmuxVersion(v, V3_4) < 0 ? 'buffer' : 'gated-buffer';
}

/** Each client's server version, asked once over it: a client lives no longer than its server. */
const versions = new WeakMap<ControlClient, Promise<TmuxVersion | null>>();

/** The version of the tmux server `client` is attached to (`#{version}`); null when unreadable. */
export function serverVersion(client: ControlClient): Promise<TmuxVersion | null> {
  let version = versions.get(client);
  if (!version) {
    version = client.run(buildControlCommand(['display-message', '-p', '#{version}'])).then(
      (body) => parseTmuxVersion(body.toString('utf8')),
      () => null,
    );
    versions.set(client, version);
  }
  return version;
}

/** One step of a line: a command line already built, or a capture (`capture-pane` arguments without `-p` or `-b`). */
export type CaptureStep = string | { readonly capture: readonly string[] };

/** The command lines of `steps` for `way`, in order. */
export function captureLines(way: CaptureWay, steps: readonly CaptureStep[]): string[] {
  return steps.flatMap((step) => {
    if (typeof step === 'string') return [step];
    if (way === 'print') return [buildControlCommand(['capture-pane', '-p', ...step.capture])];
    return [
      buildControlCommand(['set-buffer', '-b', CAPTURE_BUFFER, '--', PLACEHOLDER]),
      buildControlCommand(['capture-pane', ...step.capture, '-b', CAPTURE_BUFFER]),
      buildControlCommand(['show-buffer', '-b', CAPTURE_BUFFER]),
      DELETE_LINE,
    ];
  });
}

/** The replies of `captureLines(way, steps)` folded back to one per step, as `capture-pane -p` answers. */
export function captureReplies(way: CaptureWay, steps: readonly CaptureStep[], replies: readonly ControlReply[]): ControlReply[] {
  let i = 0;
  return steps.map((step) => {
    if (typeof step === 'string' || way === 'print') return replies[i++]!;
    const [set, capture, show] = [replies[i]!, replies[i + 1]!, replies[i + 2]!];
    i += 4;
    const failed = [set, capture, show].find((r) => !r.ok);
    if (failed) return failed;
    const text = way === 'buffer' ? unvis(show.body) : show.body;
    const body = text.equals(PLACEHOLDER_BYTES) ? Buffer.alloc(0) : text.at(-1) === LF ? text.subarray(0, -1) : text;
    return { ok: true, body, mark: show.mark };
  });
}

const PLACEHOLDER_BYTES = Buffer.from(PLACEHOLDER);
const LF = 0x0a;
const BACKSLASH = 0x5c;
/** vis(3)'s C-style escapes, by the letter after the backslash. */
const C_STYLE: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x62: 0x08, 0x61: 0x07, 0x76: 0x0b, 0x74: 0x09, 0x66: 0x0c, 0x73: 0x20 };
const isOctal = (b: number | undefined): b is number => b !== undefined && b >= 0x30 && b <= 0x37;

/**
 * Reverses tmux's `show-buffer` encoding: `\ooo` (one to three octal digits, `\0` included) is
 * that byte, `\n` `\r` `\b` `\a` `\v` `\t` `\f` `\s` the C escapes, and a backslash before any
 * other character (`\\`, `\$`) that character. Everything else is as it was.
 */
export function unvis(src: Buffer): Buffer {
  const first = src.indexOf(BACKSLASH);
  if (first === -1) return src;
  const out = Buffer.allocUnsafe(src.length);
  let o = src.copy(out, 0, 0, first);
  for (let i = first; i < src.length;) {
    const b = src[i]!;
    if (b !== BACKSLASH || i + 1 >= src.length) {
      out[o++] = b;
      i++;
      continue;
    }
    const next = src[i + 1]!;
    if (isOctal(next)) {
      let v = 0;
      let j = i + 1;
      for (; j < src.length && j < i + 4 && isOctal(src[j]); j++) v = v * 8 + src[j]! - 0x30;
      out[o++] = v & 0xff;
      i = j;
    } else {
      out[o++] = C_STYLE[next] ?? next;
      i += 2;
    }
  }
  return out.subarray(0, o);
}

/**
 * Runs `steps` as one line on `client` and answers one reply per step, each capture as
 * `capture-pane -p` would answer it, without leaving tmux a copy (see the header).
 */
export async function runCaptureLine(client: ControlClient, steps: readonly CaptureStep[]): Promise<ControlReply[]> {
  const way = captureWayOf(await serverVersion(client));
  const exchange = async (): Promise<ControlReply[]> => {
    const replies = captureReplies(way, steps, await client.commandList(captureLines(way, steps)));
    // A capture that failed (its pane gone) left the placeholder: the line ended before its delete.
    if (way !== 'print' && steps.some((step, i) => typeof step !== 'string' && !replies[i]!.ok)) {
      await client.command(DELETE_LINE).catch(() => undefined);
    }
    return replies;
  };
  if (way !== 'gated-buffer') return exchange();
  // Behind the gate until tmux answered (or for CAPTURE_GATE_MS at most: a hung tmux must not hold it).
  const sent = await topologyGate(client.target).write(async () => {
    const replies = exchange();
    await Promise.race([replies.catch(() => undefined), gateTimeout(CAPTURE_GATE_MS)]);
    return { replies };
  });
  return sent.replies;
}
