/**
 * Differential screen test, the mosh way: while a program in the pane draws (colours, cursor
 * movement, wide characters, an alternate-screen program, bracketed paste switched on), one
 * client stays connected and another drops and resumes at random points: sometimes with a
 * lastSeq the ring still holds (a delta), sometimes too old, null or from the future (a
 * snapshot). Both byte streams replayed into a terminal must show the same screen, cursor,
 * modes and scrollback as each other and the same text as tmux's own capture. The same through
 * warm snapshots (a capture kept from a quiet moment plus the ring's tail): bursts with pauses,
 * the alternate screen, a resize that makes the capture stale. Then the daemon is SIGKILLed and
 * restarted, and the resumed client must still agree, cold and then warm.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { expectSameScreen, expectTmuxText, type Screen } from '../helpers/screen.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

/** A small deterministic random source (the failures must replay). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const DRAW = String.raw`
let s = 7;
const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
const pick = (a) => a[Math.floor(r() * a.length)];
const words = ['tether', 'héllo', 'wörld', '漢字', 'かな', '🙂', 'e\u0301', 'x', 'naïve', '—', 'ok'];
const pens = ['\x1b[31m', '\x1b[1;32m', '\x1b[4;33m', '\x1b[7m', '\x1b[38;5;202m', '\x1b[48;5;17m', '\x1b[38;2;10;200;90m', '\x1b[3;35m', '\x1b[9m'];
const lines = Number(process.argv[2] || 3000);
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
(async () => {
  for (let i = 0; i < lines; i++) {
    let line = String(i).padStart(5, '0') + ' ';
    const n = 3 + Math.floor(r() * 5);
    for (let k = 0; k < n; k++) line += pick(pens) + pick(words) + '\x1b[0m ';
    // Cursor movement, away from wide characters: how a half-overwritten wide character looks
    // differs between terminal emulators, and is no business of the stream.
    if (r() < 0.1) line += '\x1b7\x1b[' + (1 + Math.floor(r() * 30)) + ';' + (95 + Math.floor(r() * 25)) + 'H' + pick(pens) + '*\x1b[0m\x1b8';
    if (r() < 0.05) line += 'abc\x1b[3D<\x1b[1C>';
    process.stdout.write(line + '.\r\n');
    if (i % 4 === 0) await sleep(4);
  }
  process.stdout.write('\x1b[0mdraw-' + 'done\r\n');
})();
`;

const ALT = String.raw`
process.stdout.write('\x1b[?1049h\x1b[2J\x1b[H\x1b[?1h');
for (let y = 1; y <= 20; y++) process.stdout.write('\x1b[' + y + ';' + (y * 2) + 'H\x1b[1;3' + (y % 8) + 'm█ row ' + y + ' 漢\x1b[0m');
process.stdout.write('\x1b[30;5Halt-' + 'ready');
process.stdin.once('data', () => {
  process.stdout.write('\x1b[?1l\x1b[?1049l');
  process.exit(0);
});
`;

// Bursts of output with quiet pauses between them, long enough for the daemon to take a warm
// capture of the quiet pane (500 ms), so resumes meet warm snapshots with and without a tail.
const BURSTS = String.raw`
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const bursts = Number(process.argv[2] || 8);
(async () => {
  for (let b = 0; b < bursts; b++) {
    for (let i = 0; i < 30; i++) process.stdout.write('\x1b[3' + ((b + i) % 8) + 'mburst ' + b + ' line ' + i + ' 漢字 ' + 'x'.repeat(i) + '\x1b[0m\r\n');
    await sleep(700 + (b % 3) * 200);
  }
  process.stdout.write('bursts-' + 'done\r\n');
})();
`;

// The pen is left on without a background: cells a terminal erases with a background colour
// (BCE) are not reported by tmux 3.3a's capture-pane, a limitation docs/client.md states.
const MODES = String.raw`
process.stdout.write('\x1b[?2004h\x1b[?1000h\x1b[1;4;33mpen left on: modes-' + 'set\r\n');
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('differential screens: a client that never left vs one that keeps resuming', () => {
  let stay: Mirror;
  let flap: Mirror;
  const rand = rng(20261122);
  const scripts: Record<string, string> = {};
  // The same port every start: the restart test's clients resume on their own.
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "diff"\n[stream]\nring_kb = 64\n`, {
    samePort: true,
    prepare: ({ home }) => {
      for (const [name, text] of Object.entries({ draw: DRAW, alt: ALT, modes: MODES, bursts: BURSTS })) {
        scripts[name] = join(home.dir, `${name}.cjs`);
        writeFileSync(scripts[name], text);
      }
    },
  });

  beforeAll(async () => {
    stay = fx.mirror('diff');
    flap = fx.mirror('diff');
    await eventually(() => stay.kinds().includes('snapshot') && flap.kinds().includes('snapshot'), 15_000);
  }, 30_000);

  const run = (script: string, arg = '') => stay.stream.sendKeys(`${process.execPath} ${scripts[script]} ${arg}\r`);

  /** Both clients hold the same position, and it stopped moving. */
  async function settled(): Promise<void> {
    let last = -1;
    await eventually(
      async () => {
        const a = stay.stream.lastSeq;
        const b = flap.stream.lastSeq;
        const stable = a !== null && a === b && a === last;
        last = a ?? -1;
        if (!stable) return false;
        await sleep(150);
        return stay.stream.lastSeq === a && flap.stream.lastSeq === a;
      },
      20_000,
      100,
    );
  }

  async function agree(): Promise<Screen> {
    await settled();
    // A resumed client may get the screen first and the history after it, at the same position
    // (docs/api.md): on a busy machine the second frame can come after the positions settled.
    const view = (s: Screen) =>
      JSON.stringify([s.buffer, s.text, s.attrs, s.cursor, s.modes, s.buffer === 'normal' ? s.scrollback.slice(-500) : null]);
    await eventually(
      async () => view(await stay.screen()) === view(await flap.screen()),
      20_000,
      100,
      'the resumed client to hold what the continuous one holds',
    ).catch(() => undefined); // the checks below say what differs
    const a = await stay.screen();
    const b = await flap.screen();
    expectSameScreen(b, a, a.buffer === 'normal' ? 500 : 0);
    expectTmuxText(a, await fx.tmux.tmux('capture-pane', '-p', '-t', '=diff:'));
    const [cx, cy] = (await fx.tmux.tmux('display', '-p', '-t', '=diff:', '#{cursor_x} #{cursor_y}')).trim().split(' ').map(Number);
    expect(a.cursor).toEqual({ x: cx, y: cy });
    expect(flap.stream.paste.on).toBe(a.modes.bracketedPaste);
    return a;
  }

  /** Drops and resumes `flap` at random points until `done` says stop; returns the kinds of resume seen. */
  async function flapUntil(done: () => Promise<boolean>): Promise<{ deltas: number; snapshots: number }> {
    const seen = { deltas: 0, snapshots: 0 };
    for (let round = 0; !(await done()) || round < 4; round++) {
      await sleep(30 + rand() * 250);
      flap.stream.close();
      // Away long enough for the ring (64 KB) to move past it, or briefly.
      await sleep(round === 1 || rand() < 0.25 ? 900 + rand() * 600 : 10 + rand() * 150);
      const forced = round === 2 || round === 3;
      if (round === 2) flap.stream.lastSeq = 1; // a position from long ago (before a restart)
      if (round === 3) flap.stream.lastSeq = Number.MAX_SAFE_INTEGER - 5; // from the future
      const before = flap.received.length;
      const target = stay.stream.lastSeq ?? 0;
      flap.stream.connect();
      // It has a base again once it got a snapshot, or (resuming honestly) caught up by delta.
      const based = () =>
        flap.received.slice(before).some((r) => r.kind === 'snapshot') || (!forced && (flap.stream.lastSeq ?? 0) >= target);
      await eventually(based, 15_000, 5);
      const after = flap.received.slice(before);
      if (process.env.DIFF_DEBUG)
        console.log(round, JSON.stringify(after.map((r) => r.kind + (r.kind === 'snapshot' || r.kind === 'data' ? ':' + r.seq : ''))));
      if (after.some((r) => r.kind === 'snapshot')) seen.snapshots++;
      else seen.deltas++;
      if (round > 400) throw new Error('the workload never finished');
    }
    return seen;
  }

  it('agrees through colours, cursor movement and wide characters while the second client flaps', async () => {
    await agree();
    run('draw', '3000');
    const seen = await flapUntil(async () => (await stay.text()).includes('draw-done'));
    expect(seen.deltas).toBeGreaterThan(0);
    expect(seen.snapshots).toBeGreaterThan(0);
    const screen = await agree();
    expect(screen.text.join('\n')).toContain('draw-done');
  }, 120_000);

  it('agrees inside an alternate-screen program and after it leaves', async () => {
    run('alt');
    await eventually(async () => (await stay.text()).includes('alt-ready'), 15_000);
    flap.stream.close();
    flap.stream.lastSeq = null;
    flap.stream.connect();
    const inside = await agree();
    expect(inside.buffer).toBe('alternate');
    expect(inside.modes.applicationCursorKeys).toBe(true);
    stay.stream.sendKeys('\r');
    await eventually(async () => (await stay.screen()).buffer === 'normal', 15_000);
    const outside = await agree();
    expect(outside.modes.applicationCursorKeys).toBe(false);
  }, 60_000);

  it('agrees on bracketed paste, mouse mode and a pen left on, with a snapshot and with a delta', async () => {
    run('modes');
    await eventually(async () => (await stay.text()).includes('modes-set'), 15_000);
    flap.stream.close();
    flap.stream.lastSeq = 1;
    flap.stream.connect();
    const screen = await agree();
    expect(screen.modes.bracketedPaste).toBe(true);
    expect(screen.modes.mouse).not.toBe('none');
    expect(flap.stream.paste.on).toBe(true);
    // The pen is still on: what the shell prints next is drawn with it on both clients.
    stay.stream.sendKeys('echo after-$((3*3))\r');
    await eventually(async () => (await flap.text()).includes('after-9'), 15_000);
    await agree();
  }, 60_000);

  /** The daemon's snapshot counts (docs/api.md, health). */
  const snapshotCounts = async () =>
    ((await (await fx.d.get('/health')).json()) as { snapshots: { cold: number; warmCaptures: number; warmServed: number } }).snapshots;

  /** Waits for a warm capture newer than the counts of now (the pane went quiet); returns those counts. */
  async function awaitWarmCapture(what: string) {
    const before = await snapshotCounts();
    await eventually(async () => (await snapshotCounts()).warmCaptures > before.warmCaptures, 15_000, 50, what);
    return before;
  }

  /** Reconnects `flap` with no position: it must get a snapshot (warm or cold), then agree. */
  async function resyncFlap(): Promise<void> {
    const before = flap.received.length;
    flap.stream.close();
    flap.stream.lastSeq = null;
    flap.stream.connect();
    await eventually(() => flap.received.slice(before).some((r) => r.kind === 'snapshot'), 15_000, 5, 'a snapshot for the resumed client');
  }

  it('agrees when resumes go through warm snapshots: at random moments of bursty output, in the alternate screen, after a resize', async () => {
    await agree();
    const start = await snapshotCounts();
    run('bursts', '8');
    // Random moments: inside a burst (a warm capture plus the ring's tail) or in a pause.
    for (let round = 0; !(await stay.text()).includes('bursts-done'); round++) {
      await sleep(100 + rand() * 500);
      await resyncFlap();
      if (round > 200) throw new Error('the bursts never finished');
    }
    await agree();
    const afterBursts = await snapshotCounts();
    // Warm snapshots were taken and served: the path under test was the one exercised.
    expect(afterBursts.warmCaptures).toBeGreaterThan(start.warmCaptures);
    expect(afterBursts.warmServed).toBeGreaterThan(start.warmServed);

    // The alternate screen, captured warm while quiet.
    run('alt');
    await eventually(async () => (await stay.text()).includes('alt-ready'), 15_000);
    const inAlt = await awaitWarmCapture('a warm capture of the alternate screen');
    await resyncFlap();
    expect((await agree()).buffer).toBe('alternate');
    expect((await snapshotCounts()).warmServed).toBeGreaterThan(inAlt.warmServed);
    stay.stream.sendKeys('\r');
    await eventually(async () => (await stay.screen()).buffer === 'normal', 15_000);
    await agree();

    // A resize changes the screen without a byte in the stream: the warm capture is dropped and
    // tmux is asked. Short lines, so the reflow moves nothing the continuous client would miss.
    stay.stream.sendKeys('clear; echo resized-$((6*6))\r');
    await eventually(async () => (await stay.text()).includes('resized-36'), 15_000);
    await awaitWarmCapture('a warm capture before the resize');
    await fx.tmux.tmux('resize-window', '-t', '=diff:', '-x', '100', '-y', '40');
    await fx.tmux.tmux('resize-window', '-t', '=diff:', '-x', '120', '-y', '40');
    const resized = await snapshotCounts();
    await resyncFlap();
    await agree();
    expect((await snapshotCounts()).cold).toBeGreaterThan(resized.cold);
  }, 120_000);

  it('agrees after the daemon is SIGKILLed and restarted: the old lastSeq gets a snapshot', async () => {
    const before = await agree();
    const oldSeq = flap.stream.lastSeq!;
    const seen = flap.received.length;
    await fx.d.kill();
    await fx.startAgain();
    // The old position is from before the restart: the resume gets a snapshot, above it.
    await eventually(() => flap.received.slice(seen).some((r) => r.kind === 'snapshot'), 15_000, 20);
    expect(flap.received.slice(seen).find((r) => r.kind === 'snapshot')!.seq).toBeGreaterThan(oldSeq);
    await settled();
    const after = await agree();
    expect(after.text).toEqual(before.text);
    stay.stream.sendKeys('echo restarted-$((4*4))\r');
    await eventually(async () => (await flap.text()).includes('restarted-16'), 15_000);
    await agree();
    // The new daemon keeps its own warm captures: once the pane is quiet, a resume is served warm.
    await eventually(async () => (await snapshotCounts()).warmCaptures > 0, 15_000, 50, 'a warm capture in the restarted daemon');
    const warm = await snapshotCounts();
    await resyncFlap();
    await agree();
    expect((await snapshotCounts()).warmServed).toBeGreaterThan(warm.warmServed);
  }, 60_000);
});
