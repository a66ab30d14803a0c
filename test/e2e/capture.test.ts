/**
 * Captures over a control client (src/tmux/screen/capture.ts), on a real tmux server: what tether reads
 * is what `capture-pane -p` prints, byte for byte, whichever way it was read; the tmux server
 * keeps nothing of it (tmux 3.2 to 3.5a keep every printed capture of a control client); captures
 * at once on two clients stay apart; and a
 * command that fails in a line of several does not hand the replies after it to the wrong callers.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureWayOf, newCaptureSlot, runCaptureLine, serverVersion, type CaptureWay } from '../../src/tmux/screen/capture.js';
import { ControlClient } from '../../src/tmux/control/control-client.js';
import { buildControlCommand } from '../../src/tmux/quote.js';
import { compareTmuxVersion, parseTmuxVersion } from '../../src/tmux/version.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const run = promisify(execFile);

/** A program that fills a pane's history with what vis(3) escapes, then goes to the alternate screen and leaves an escape half written. */
const PROGRAM = String.raw`binmode STDOUT; $| = 1;
for my $k (1 .. 10100) {
  printf("\e[3%dm\xe2\x97\x8f\e[0m back\\slash \$HOME \${x} \$_ \$1 100%% tab\there \x01\x7f %d \e[1;38;2;1;2;3mbold\e[0m\n", $k % 7 + 1, $k);
}
print "wide \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 end\n";
print "\e[?1049h\e[2Jon the alternate screen \\ \$PATH\n";
print "\e[38;2;1;2;3mready\n\e[";
sleep 100000;
`;

/** The steps compared: history, screen, alternate screen, what is pending, the plain visible screen. */
const CAPTURES = (pane: string): string[][] => [
  ['-e', '-J', '-t', pane, '-S', '-10000', '-E', '-1'],
  ['-e', '-J', '-t', pane, '-S', '0', '-E', '-'],
  ['-e', '-J', '-a', '-q', '-t', pane],
  ['-P', '-t', pane],
  ['-t', pane],
];

describe('captures over a control client', () => {
  let tmux: PrivateTmux;
  let client: ControlClient;
  let pane: string;
  let serverPid: number;

  const rssKb = (): number => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${serverPid}/status`, 'utf8'))![1]);

  beforeAll(async () => {
    tmux = await privateTmux();
    const program = join(tmux.dir, 'fill.pl');
    writeFileSync(program, PROGRAM);
    await tmux.tmux('new-session', '-d', '-s', 'cap', '-x', '120', '-y', '40', 'cat');
    await tmux.tmux('set-option', '-g', 'history-limit', '10000');
    pane = (await tmux.tmux('new-window', '-d', '-P', '-F', '#{pane_id}', '-t', 'cap', '--', 'perl', program)).trim();
    serverPid = Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
    await eventually(
      async () => (await tmux.tmux('capture-pane', '-p', '-t', pane)).includes('ready'),
      60_000,
      50,
      'the program to fill its history and write its last line',
    );
    client = ControlClient.attach({ target: tmux.target, session: 'cap', onEvent: () => undefined, onClose: () => undefined });
    await client.attached;
  }, 90_000);
  afterAll(async () => {
    client?.close();
    await client?.gone;
    await tmux?.cleanup();
  });

  /** `capture-pane -p` from a tmux process: the reference (a process's capture is freed by every tmux). */
  const printed = async (args: string[]): Promise<Buffer> => {
    const { stdout } = await run('tmux', ['-S', tmux.socket, 'capture-pane', '-p', ...args], { encoding: 'buffer', maxBuffer: 64 << 20 });
    return stdout.subarray(0, stdout.at(-1) === 0x0a ? -1 : undefined);
  };

  const readWay = async (way: CaptureWay, args: string[]): Promise<Buffer> => {
    const [reply] = await runCaptureLine(client, [{ capture: args }], () => way);
    expect(reply!.ok, reply!.body.toString('utf8')).toBe(true);
    return reply!.body;
  };

  it('reads what capture-pane -p prints, byte for byte, printed or through a buffer', { timeout: 60_000 }, async () => {
    // Through a buffer (shown escaped up to 3.3a, or saved to a file): behind the topology gate
    // from 3.4, where a changed buffer notifies.
    const version = (await serverVersion(client))!;
    const bufferWay: CaptureWay = compareTmuxVersion(version, parseTmuxVersion('3.4')!) < 0 ? 'buffer' : 'gated-buffer';
    expect(Number((await tmux.tmux('display-message', '-p', '-t', pane, '#{history_size}')).trim())).toBeGreaterThanOrEqual(9000);
    for (const args of CAPTURES(pane)) {
      const reference = await printed(args);
      const label = args.join(' ');
      expect((await readWay(bufferWay, args)).equals(reference), `through a buffer (tmux ${version.label}): ${label}`).toBe(true);
      expect((await readWay('print', args)).equals(reference), `printed: ${label}`).toBe(true);
      const [chosen] = await runCaptureLine(client, [{ capture: args }]);
      expect(chosen!.body.equals(reference), `this tmux's way: ${label}`).toBe(true);
    }
    // What the comparison covered: escapes, a backslash, `$` names, UTF-8, the half-written escape.
    const history = (await printed(CAPTURES(pane)[0]!)).toString('utf8');
    expect(history).toContain('\x1b[1m');
    expect(history).toContain('back\\slash $HOME ${x}');
    expect((await printed(['-e', '-J', '-a', '-q', '-t', pane])).toString('utf8')).toContain('wide 中文 😀 end');
    expect((await printed(['-P', '-t', pane])).toString('latin1')).toBe('\x1b[');
  });

  it('keeps captures apart that run at once on two clients: each reply is its own capture', { timeout: 60_000 }, async () => {
    // tmux runs other clients' commands while a line waits on its save-buffer.
    const second = ControlClient.attach({ target: tmux.target, session: 'cap', onEvent: () => undefined, onClose: () => undefined });
    try {
      await second.attached;
      const asked = CAPTURES(pane);
      const references = await Promise.all(asked.map((args) => printed(args)));
      const runs = Array.from({ length: 20 }, (_, i) => ({ client: i % 2 === 0 ? client : second, k: i % asked.length }));
      const replies = await Promise.all(
        runs.map(({ client: c, k }) => runCaptureLine(c, [{ capture: asked[k]! }, 'display-message -p done'])),
      );
      replies.forEach(([capture, done], i) => {
        expect(capture!.body.equals(references[runs[i]!.k]!), `capture ${i}: ${asked[runs[i]!.k]!.join(' ')}`).toBe(true);
        expect(done!.body.toString('utf8').trim()).toBe('done');
      });
    } finally {
      second.close();
      await second.gone;
    }
  });

  it(
    "takes every capture of a line at one instant, with the line's other commands, while the pane prints",
    { timeout: 60_000 },
    async () => {
      // A pane printing a numbered line every millisecond or so, its history far from full.
      const printer = (
        await tmux.tmux(
          'new-window',
          '-d',
          '-P',
          '-F',
          '#{pane_id}',
          '-t',
          'cap',
          '--',
          'perl',
          '-e',
          '$|=1; select(undef,undef,undef,0.001), print "printed $_\\n" for 1..30000; sleep 100000',
        )
      ).trim();
      try {
        await eventually(
          async () => Number((await tmux.tmux('display-message', '-p', '-t', printer, '#{history_size}')).trim()) > 100,
          30_000,
          25,
          'the printing pane to have some history',
        );
        for (let i = 0; i < 20; i++) {
          const [history, size] = await runCaptureLine(client, [
            { capture: ['-t', printer, '-S', '-10000', '-E', '-1'] },
            buildControlCommand(['display-message', '-p', '-t', printer, '#{history_size}']),
          ]);
          // What the capture holds is the history the pane had when the command after it ran.
          expect(history!.body.toString('utf8').split('\n').length, `line ${i}`).toBe(Number(size!.body.toString('utf8').trim()));
        }
      } finally {
        await tmux.tmux('kill-pane', '-t', printer);
      }
    },
  );

  it('leaves the tmux server nothing of a capture', { timeout: 120_000 }, async () => {
    const history = CAPTURES(pane)[0]!;
    const size = (await printed(history)).length;
    expect(size).toBeGreaterThan(500_000);
    // Warm: the allocator's heap grows once to hold a capture.
    // A history (saved to a file) and a screen (shown) a time.
    const line = [{ capture: history }, { capture: CAPTURES(pane)[1]! }];
    for (let i = 0; i < 5; i++) await runCaptureLine(client, line);
    const before = rssKb();
    for (let i = 0; i < 40; i++) await runCaptureLine(client, line);
    const grownKb = rssKb() - before;
    // 40 kept captures would be 40 x size; tether's way keeps none.
    expect(grownKb, `the tmux server grew ${grownKb} KiB over 40 captures of ${size} bytes`).toBeLessThan(4096);

    // Why: this tmux keeps every capture it printed to a control client (3.2 to 3.5a).
    if (captureWayOf(await serverVersion(client)) !== 'print') {
      const leakBefore = rssKb();
      for (let i = 0; i < 10; i++) await readWay('print', history);
      expect(rssKb() - leakBefore, 'printed captures kept by this tmux').toBeGreaterThan((10 * size * 0.8) / 1024);
    }
  });

  it('answers the commands of a line after one that failed as not run, and every later reply to its own caller', async () => {
    const replies = await client.commandList(['capture-pane -p -t %9999', 'display-message -p after', 'display-message -p last']);
    expect(replies.map((r) => [r.ok, r.body.toString('utf8').trim()])).toEqual([
      [false, "can't find pane: %9999"],
      [false, 'not run: an earlier command of its line failed'],
      [false, 'not run: an earlier command of its line failed'],
    ]);
    expect((await client.run('display-message -p next')).toString('utf8').trim()).toBe('next');

    const [failed, after] = await runCaptureLine(client, [{ capture: ['-t', '%9999'] }, 'display-message -p after']);
    expect([failed!.ok, failed!.body.toString('utf8').trim()]).toEqual([false, "can't find pane: %9999"]);
    expect(after!.ok).toBe(false);
    expect((await client.run('display-message -p again')).toString('utf8').trim()).toBe('again');
    // No buffer of tether's is left behind by a capture, failed or not, and no file.
    expect(await tmux.tmux('list-buffers', '-F', '#{buffer_name}')).toBe('');
    expect(readdirSync(dirname(newCaptureSlot().file))).toEqual([]);
  });
});
