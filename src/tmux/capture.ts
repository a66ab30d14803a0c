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
 * On those versions a capture goes through a paste buffer of its own and a file, in one line of
 * commands: the buffer set to a placeholder, the capture into it, `save-buffer` to a file in a
 * private directory of this process, `delete-buffer`; the daemon reads the file and removes it.
 * tmux frees all of that. A control client is an attached client, so tmux writes the file itself,
 * the bytes as they are, before it answers (file.c `file_write`). Not `show-buffer`: up to 3.3a it
 * prints through `vis(3)`, which costs tmux ~8 ms more than the capture itself on a whole history
 * and the daemon as much again to reverse. `save-buffer` lets tmux run other clients' commands
 * before the line goes on (it waits for the write to be reported), so each capture has a buffer
 * and a file named for it alone. A capture that fails (its pane gone) ends the line before the
 * delete, which then follows on its own. A capture that comes out empty (no alternate screen,
 * nothing pending) leaves the placeholder, which no real capture can be: a capture of rows ends
 * with a newline, and what is pending is never one plain character.
 *
 * From 3.4 a paste buffer that changes also notifies every control client
 * (`%paste-buffer-changed`), and tmux before 3.7 crashes when a notification reaches a control
 * client in its handshake (src/tmux/topology-gate.ts): there the line runs as a writer of the
 * topology gate. From 3.6 on, `capture-pane -p` frees its text and is used as it is.
 *
 * Invariant: whichever way, a capture's reply is what `capture-pane -p` answers (one trailing
 * newline dropped), and a failed capture is a failed reply with tmux's words.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlClient, ControlReply } from './control-client.js';
import { buildControlCommand } from './quote.js';
import { gateTimeout, topologyGate } from './topology-gate.js';
import { compareTmuxVersion, parseTmuxVersion, type TmuxVersion } from './version.js';

/** What the buffer holds before the capture: left there by a capture that is empty. */
const PLACEHOLDER = 'x';
/** How long a capture line may wait for the topology gate (tmux 3.4 to 3.5a). */
const CAPTURE_GATE_MS = 15_000;

/** How a tmux server's captures are read: printed; through a buffer and a file; the same behind the gate (3.4 to 3.5a). */
export type CaptureWay = 'print' | 'file' | 'gated-file';

const [V3_2, V3_4, V3_6] = ['3.2', '3.4', '3.6'].map((label) => parseTmuxVersion(label)!) as [TmuxVersion, TmuxVersion, TmuxVersion];

/** The way for a server of version `v` (null: unknown, read as a current tmux). */
export function captureWayOf(v: TmuxVersion | null): CaptureWay {
  if (v === null || compareTmuxVersion(v, V3_2) < 0 || compareTmuxVersion(v, V3_6) >= 0) return 'print';
  return compareTmuxVersion(v, V3_4) < 0 ? 'file' : 'gated-file';
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
export const CAPTURE_BUFFER_PREFIX = 'tether-capture-';

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

/** The command lines of `steps` for `way`, in order; `slots` has one slot per capture step. */
export function captureLines(way: CaptureWay, steps: readonly CaptureStep[], slots: readonly CaptureSlot[] = []): string[] {
  let k = 0;
  return steps.flatMap((step) => {
    if (typeof step === 'string') return [step];
    if (way === 'print') return [buildControlCommand(['capture-pane', '-p', ...step.capture])];
    const slot = slots[k++]!;
    return [
      buildControlCommand(['set-buffer', '-b', slot.buffer, '--', PLACEHOLDER]),
      buildControlCommand(['capture-pane', ...step.capture, '-b', slot.buffer]),
      // The path is expanded as a format: `##` is a `#`.
      buildControlCommand(['save-buffer', '-b', slot.buffer, slot.file.replaceAll('#', '##')]),
      deleteLine(slot),
    ];
  });
}

/** A step's answer before its file is read: a reply, or the file a capture was saved to. */
export type FoldedReply = ControlReply | { readonly ok: true; readonly saved: CaptureSlot; readonly mark: ControlReply['mark'] };

/** The replies of `captureLines(way, steps, slots)` folded back to one per step. */
export function captureReplies(
  way: CaptureWay,
  steps: readonly CaptureStep[],
  replies: readonly ControlReply[],
  slots: readonly CaptureSlot[] = [],
): FoldedReply[] {
  let i = 0;
  let k = 0;
  return steps.map((step) => {
    if (typeof step === 'string' || way === 'print') return replies[i++]!;
    const slot = slots[k++]!;
    const [set, capture, save] = [replies[i]!, replies[i + 1]!, replies[i + 2]!];
    i += 4;
    return [set, capture, save].find((r) => !r.ok) ?? { ok: true, saved: slot, mark: save.mark };
  });
}

const PLACEHOLDER_BYTES = Buffer.from(PLACEHOLDER);
const LF = 0x0a;

/** What `capture-pane -p` would have answered, from what a capture saved: the placeholder is empty, one newline dropped. */
export function savedText(text: Buffer): Buffer {
  if (text.equals(PLACEHOLDER_BYTES)) return Buffer.alloc(0);
  return text.at(-1) === LF ? text.subarray(0, -1) : text;
}

/** Reads a folded reply's file (and removes it): the reply as `capture-pane -p` answers. */
async function readSaved(reply: FoldedReply): Promise<ControlReply> {
  if (!('saved' in reply)) return reply;
  const file = reply.saved.file;
  try {
    return { ok: true, body: savedText(await readFile(file)), mark: reply.mark };
  } catch (err) {
    return { ok: false, body: Buffer.from(`the capture could not be read back: ${(err as Error).message}`), mark: reply.mark };
  } finally {
    await rm(file, { force: true });
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
    const folded = captureReplies(way, steps, await client.commandList(captureLines(way, steps, slots)), slots);
    // A capture that failed (its pane gone) left its buffer: the line ended before its delete.
    const failed = slots.filter((_, k) => !folded[captureIndex(steps, k)]!.ok);
    await Promise.all(failed.map((slot) => client.command(deleteLine(slot)).catch(() => undefined)));
    return Promise.all(folded.map(readSaved));
  };
  if (way !== 'gated-file') return exchange();
  // Behind the gate until tmux answered (or for CAPTURE_GATE_MS at most: a hung tmux must not hold it).
  const sent = await topologyGate(client.target).write(async () => {
    const replies = exchange();
    await Promise.race([replies.catch(() => undefined), gateTimeout(CAPTURE_GATE_MS)]);
    return { replies };
  });
  return sent.replies;
}

/** The index in `steps` of the `k`th capture step. */
function captureIndex(steps: readonly CaptureStep[], k: number): number {
  let seen = -1;
  return steps.findIndex((s) => typeof s !== 'string' && ++seen === k);
}
