/**
 * Snapshots against real tmux, checked in @xterm/headless: a snapshot replayed into a fresh
 * terminal shows what a client that saw every byte shows, and what tmux itself shows; and
 * "snapshot, then the chunks after its position" equals the continuous stream.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RingChunk } from '../../src/stream/ring.js';
import { startLivePane, type LivePaneView } from '../helpers/live-pane.js';
import type { SidecarSystem } from '../../src/actors/system.js';
import { sendKeysHexCommands } from '../../src/tmux/pane/input.js';
import { expectSameScreen, expectTmuxText, screenOf } from '../helpers/screen.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const E = '\x1b';

/** Many coloured lines (history), wide characters, a styled prompt left with a live pen. */
function mainScreenWorkload(): string {
  let s = '';
  for (let i = 0; i < 180; i++) {
    s += `${E}[3${i % 8}mline ${i}${E}[0m ${'x'.repeat(i % 130)} ${E}[1;4mbold-under${E}[0m ${E}[48;5;${i % 256}m  ${E}[0m\r\n`;
  }
  s += `wide: 漢字テスト 🎉 é\r\n`;
  s += `${E}[38;2;10;200;30mtruecolor ${E}[7minverse${E}[27m tail\r\n`;
  s += `${E}[?2004h${E}[?1h${E}=prompt> ${E}[1;35m`; // bracketed paste + DECCKM + keypad on, pen left magenta bold
  return s;
}

/** An alternate-screen program over a main screen with history, with a scroll region. */
function altScreenWorkload(): string {
  let s = '';
  for (let i = 0; i < 60; i++) s += `shell line ${i}\r\n`;
  s += `$ vim${E}[?1049h${E}[H${E}[2J`;
  for (let r = 1; r <= 40; r++) s += `${E}[${r};1H${E}[44m~${E}[0m row ${r}`;
  s += `${E}[2;39r${E}[?1002h${E}[?1006h${E}[20;5H${E}[?25l${E}[32m`;
  return s;
}

describe('pane snapshots on real tmux', () => {
  let tmux: PrivateTmux;
  let system: SidecarSystem;

  beforeEach(async () => {
    tmux = await privateTmux();
  });
  afterEach(async () => {
    await system?.stop();
    await tmux.cleanup();
  });

  /** A session whose pane prints `file` (raw, byte for byte) after one key, then waits. */
  async function sessionPrinting(bytes: string, extra = ''): Promise<{ rt: LivePaneView; chunks: RingChunk[]; start: number }> {
    const file = join(tmux.dir, 'out.bin');
    writeFileSync(file, bytes);
    const more = join(tmux.dir, 'more.bin');
    writeFileSync(more, extra);
    const ready = join(tmux.dir, 'ready');
    const script = `stty raw -echo; touch ${ready}; head -c1 >/dev/null; cat ${file}; head -c1 >/dev/null; cat ${more}; exec sleep 100000`;
    // Every snapshot here is a capture made when asked (warm ones: warm-snapshot.test.ts).
    const started = await startLivePane(tmux, 'snap', script, { ringBytes: 8 << 20, warmSnapshots: false });
    system = started.system;
    const rt = started.rt;
    await eventually(() => existsSync(ready));
    const chunks: RingChunk[] = [];
    rt.stream.subscribe({ chunk: (c) => chunks.push(c), gap: () => undefined });
    const start = rt.stream.position;
    await rt.run(sendKeysHexCommands(rt.paneId!, Buffer.from('g')));
    await eventually(() => rt.stream.position - start >= Buffer.byteLength(bytes), 15_000);
    return { rt, chunks, start };
  }

  /** Asserts that the snapshot's bytes (and any after it) show what the continuous client shows. */
  async function expectAsContinuous(snapshotBytes: Buffer[], continuous: Buffer[]): Promise<void> {
    expectSameScreen(await screenOf(snapshotBytes), await screenOf(continuous), 100);
  }

  for (const [name, workload] of [
    ['main screen with history, colours, wide characters, modes and a live pen', mainScreenWorkload()],
    ['alternate screen over a main screen, scroll region, mouse, hidden cursor', altScreenWorkload()],
  ] as const) {
    it(`${name}: snapshot = continuous client = tmux`, async () => {
      const { rt, chunks } = await sessionPrinting(workload);
      const snap = await rt.snapshot();
      expect(snap.position).toBe(rt.stream.position);
      await expectAsContinuous(
        [snap.data],
        chunks.map((c) => c.data),
      );
      // And the text tmux itself shows.
      expectTmuxText(await screenOf([snap.data]), await tmux.tmux('capture-pane', '-p', '-t', '=snap:'));
    });
  }

  it('snapshot mid-stream, then the chunks after its position, equals the continuous stream', async () => {
    // The first part ends inside an escape sequence; the second part completes it.
    const first = mainScreenWorkload() + `${E}[3`;
    const second = `1mred after the snapshot${E}[0m\r\nnext line`;
    const { rt, chunks } = await sessionPrinting(first, second);
    const snap = await rt.snapshot();
    await rt.run(sendKeysHexCommands(rt.paneId!, Buffer.from('g')));
    const end = snap.position + Buffer.byteLength(second);
    await eventually(() => rt.stream.position >= end, 15_000);
    const after = rt.stream.ring.since(snap.position)!;
    expect(after).not.toBeNull();
    // `chunks` is the continuous client: subscribed before the first byte, still subscribed.
    await expectAsContinuous(
      [snap.data, ...after.map((c) => c.data)],
      chunks.map((c) => c.data),
    );
  });
});
