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
 * On those versions a capture goes through a paste buffer of its own, in one line of commands:
 * each buffer set to a placeholder and the capture into it (every capture of the line, with its
 * other commands in their places), then each text read back, then `delete-buffer` for each. tmux
 * frees all of that. A capture of the history (up to 10,000 lines, ~1 MB) is read back with
 * `save-buffer` to a file in a private directory of this process, which the daemon reads and
 * removes: a control client is an attached client, so tmux writes the file itself, the bytes as
 * they are, before it answers (file.c `file_write`). Any smaller capture is read back with
 * `show-buffer`, which up to 3.3a prints through `vis(3)` (reversed by src/tmux/screen/unvis.ts): on a
 * whole history that escaping kept tmux ~8 ms longer and the daemon ~4 ms, while a save makes
 * tmux end the line one turn of its event loop later, which on a few KB costs more than it saves.
 * During that turn tmux reads what panes printed and runs other clients' commands: so every
 * capture of a line is taken before its first save (a snapshot's history, screen and cursor are
 * of one instant, the one its replies' marks give), and each capture has a buffer and a file
 * named for it alone. A capture that fails (its pane gone) ends the line before the deletes,
 * which then follow on their own. A capture that comes out empty (no alternate screen, nothing
 * pending) leaves the placeholder, which no real capture can be: a capture of rows ends with a
 * newline, and what is pending is never one plain character.
 *
 * From 3.4 a paste buffer that changes also notifies every control client
 * (`%paste-buffer-changed`), and tmux before 3.7 crashes when a notification reaches a control
 * client in its handshake (src/tmux/topology-gate.ts): there the line runs as a writer of the
 * topology gate. From 3.6 on, `capture-pane -p` frees its text and is used as it is.
 *
 * Invariant: whichever way, a capture's reply is what `capture-pane -p` answers (one trailing
 * newline dropped), and a failed capture is a failed reply with tmux's words.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlClient, ControlReply } from '../control/control-client.js';
import { buildControlCommand } from '../quote.js';
import { unvis } from './unvis.js';
import { gateTimeout, topologyGate } from '../topology-gate.js';
import { compareTmuxVersion, parseTmuxVersion, type TmuxVersion } from '../version.js';

/** What the buffer holds before the capture: left there by a capture that is empty. */
const PLACEHOLDER = 'x';
/** How long a capture line may wait for the topology gate (tmux 3.4 to 3.5a). */
const CAPTURE_GATE_MS = 15_000;

/** How a tmux server's captures are read: printed; through a buffer; through a buffer behind the gate (3.4 to 3.5a). */
export type CaptureWay = 'print' | 'buffer' | 'gated-buffer';

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

/** Where one capture passes: a paste buffer and a file, both its own. */
export interface CaptureSlot {
  readonly buffer: string;
  readonly file: string;
}

/** The prefix of every buffer a capture passes through. */
const CAPTURE_BUFFER_PREFIX = 'tether-capture-';

let slotDir: string | null = null;
let slotCount = 0;

/**
 * A new slot: a buffer named for this process and the capture, a file in this process's private
 * directory (made on first use, 0700, removed when the process exits).
 */
export function newCaptureSlot(): CaptureSlot {
  if (slotDir === null) {
    const dir = mkdtempSync(join(tmpdir(), 'tether-captures-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    slotDir = dir;
  }
  const n = slotCount++;
  return { buffer: `${CAPTURE_BUFFER_PREFIX}${process.pid}-${n}`, file: join(slotDir, String(n)) };
}

const deleteLine = (slot: CaptureSlot): string => buildControlCommand(['delete-buffer', '-b', slot.buffer]);

/**
 * Whether a capture reaches into the history (`-S` above the screen's first row): its text is
 * saved to a file. Any other (a screen, a thumbnail, what is pending: a few KB) is shown, since a
 * save makes tmux finish the line one turn of its event loop later, and a hundred thumbnails at
 * once waited for a hundred turns (docs/benchmarks.md).
 */
export function savedToFile(capture: readonly string[]): boolean {
  const start = capture[capture.indexOf('-S') + 1];
  return capture.includes('-S') && (start === '-' || Number(start) < 0);
}

/**
 * The command lines of `steps` for `way`, in order; `slots` has one slot per capture step. On a
 * buffer way every capture is taken first, with the plain steps in their places, and only then
 * read back: a save lets tmux turn its event loop (and a pane print) before the line goes on, so
 * everything a snapshot asks for is taken before the first save, at one instant of the pane, as
 * the marks of their replies say.
 */
export function captureLines(way: CaptureWay, steps: readonly CaptureStep[], slots: readonly CaptureSlot[] = []): string[] {
  if (way === 'print')
    return steps.map((step) => (typeof step === 'string' ? step : buildControlCommand(['capture-pane', '-p', ...step.capture])));
  const captures = steps.filter((step) => typeof step !== 'string');
  let k = 0;
  const taken = steps.flatMap((step) => {
    if (typeof step === 'string') return [step];
    const slot = slots[k++]!;
    return [
      buildControlCommand(['set-buffer', '-b', slot.buffer, '--', PLACEHOLDER]),
      buildControlCommand(['capture-pane', ...step.capture, '-b', slot.buffer]),
    ];
  });
  const readBack = captures.map((step, i) =>
    savedToFile(step.capture)
      ? // The path is expanded as a format: `##` is a `#`.
        buildControlCommand(['save-buffer', '-b', slots[i]!.buffer, slots[i]!.file.replaceAll('#', '##')])
      : buildControlCommand(['show-buffer', '-b', slots[i]!.buffer]),
  );
  return [...taken, ...readBack, ...slots.map(deleteLine)];
}

/** A step's answer before its file is read: a reply, or the file a capture was saved to. */
export type FoldedReply = ControlReply | { readonly ok: true; readonly saved: CaptureSlot; readonly mark: ControlReply['mark'] };

/**
 * The replies of `captureLines(way, steps, slots)` folded back to one per step. A capture's mark
 * is its `capture-pane`'s: the instant it was taken.
 */
export function captureReplies(
  way: CaptureWay,
  steps: readonly CaptureStep[],
  replies: readonly ControlReply[],
  slots: readonly CaptureSlot[] = [],
): FoldedReply[] {
  if (way === 'print') return steps.map((_, i) => replies[i]!);
  let i = 0;
  let k = 0;
  const readBackAt = steps.reduce((n, step) => n + (typeof step === 'string' ? 1 : 2), 0);
  return steps.map((step) => {
    if (typeof step === 'string') return replies[i++]!;
    const slot = slots[k]!;
    const [set, capture, out] = [replies[i]!, replies[i + 1]!, replies[readBackAt + k]!];
    i += 2;
    k++;
    const failed = [set, capture, out].find((r) => !r.ok);
    if (failed) return failed;
    if (savedToFile(step.capture)) return { ok: true, saved: slot, mark: capture.mark };
    return { ok: true, body: savedText(way === 'buffer' ? unvis(out.body) : out.body), mark: capture.mark };
  });
}

const PLACEHOLDER_BYTES = Buffer.from(PLACEHOLDER);
const LF = 0x0a;

/** What `capture-pane -p` would have answered, from a capture's buffer: the placeholder is empty, one newline dropped. */
export function savedText(text: Buffer): Buffer {
  if (text.equals(PLACEHOLDER_BYTES)) return Buffer.alloc(0);
  return text.at(-1) === LF ? text.subarray(0, -1) : text;
}

/**
 * Reads a folded reply's file (and removes it): the reply as `capture-pane -p` answers. At once:
 * the file was just written and is in the page cache (a whole history, ~1 MB, reads in well
 * under a millisecond), where the thread pool would take a round trip for each of open, stat,
 * read, close and unlink.
 */
function readSaved(reply: FoldedReply): ControlReply {
  if (!('saved' in reply)) return reply;
  const file = reply.saved.file;
  try {
    return { ok: true, body: savedText(readFileSync(file)), mark: reply.mark };
  } catch (err) {
    return { ok: false, body: Buffer.from(`the capture could not be read back: ${(err as Error).message}`), mark: reply.mark };
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * Runs `steps` as one line on `client` and answers one reply per step, each capture as
 * `capture-pane -p` would answer it, without leaving tmux a copy (see the header). `wayOf` picks
 * the way for the server's version (tests read one capture every way).
 */
export async function runCaptureLine(client: ControlClient, steps: readonly CaptureStep[], wayOf = captureWayOf): Promise<ControlReply[]> {
  const way = wayOf(await serverVersion(client));
  const slots = way === 'print' ? [] : steps.filter((s) => typeof s !== 'string').map(() => newCaptureSlot());
  const exchange = async (): Promise<ControlReply[]> => {
    const replies = await client.commandList(captureLines(way, steps, slots));
    // A line that failed (a pane gone) ended before its deletes: each buffer not deleted goes now.
    const undeleted = slots.filter((_, k) => !replies[replies.length - slots.length + k]!.ok);
    await Promise.all(undeleted.map((slot) => client.command(deleteLine(slot)).catch(() => undefined)));
    return captureReplies(way, steps, replies, slots).map(readSaved);
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
