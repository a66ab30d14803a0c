/**
 * The ceiling on this machine: how fast tmux itself emits a pane's output in control mode,
 * measured with a bare `tmux -C` reader that only counts bytes until a marker. Every stream
 * benchmark reports its ratio against this, measured in the same run.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Lines of printable text with SGR codes, `mb` megabytes in all, ending with a marker line. */
export function floodFile(dir: string, mb: number, marker: string): string {
  const file = join(dir, 'flood.txt');
  const lines: string[] = [];
  let size = 0;
  let i = 0;
  while (size < mb * 1e6) {
    const line = `\x1b[3${i % 8}m${String(i).padStart(8, '0')}\x1b[0m ${'lorem ipsum dolor sit amet '.repeat(3)}\x1b[1mend\x1b[0m\n`;
    lines.push(line);
    size += line.length;
    i++;
  }
  lines.push(`${marker}\n`);
  writeFileSync(file, lines.join(''));
  return file;
}

/** Runs `fn` with a private tmux server (socket in a temp dir), cleaned up after. */
export async function withPrivateTmux<T>(fn: (socket: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-'));
  const socket = join(dir, 'tmux.sock');
  try {
    return await fn(socket, dir);
  } finally {
    try {
      execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** MB/s of pane bytes tmux delivers to a bare control-mode reader (raw stdout bytes counted). */
export async function measureTmuxControlRate(mb = 20): Promise<{ mbPerSec: number; seconds: number; recording: Buffer }> {
  return withPrivateTmux(async (socket, dir) => {
    const marker = `MARK-${Date.now()}`;
    const file = floodFile(dir, mb, marker);
    execFileSync('tmux', [
      '-S',
      socket,
      'new-session',
      '-d',
      '-s',
      'b',
      '-x',
      '120',
      '-y',
      '40',
      'sh',
      '-c',
      `stty raw -echo; head -c1 >/dev/null; cat ${file}; exec sleep 100000`,
    ]);
    const reader = spawn('tmux', ['-S', socket, '-C', 'attach', '-t', '=b'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let tail = '';
    const recorded: Buffer[] = [];
    const done = new Promise<number>((resolve) => {
      reader.stdout.on('data', (d: Buffer) => {
        recorded.push(d);
        tail = (tail + d.toString('latin1')).slice(-256);
        if (tail.includes(marker)) resolve(performance.now());
      });
    });
    await new Promise((r) => setTimeout(r, 300));
    const start = performance.now();
    execFileSync('tmux', ['-S', socket, 'send-keys', '-t', '=b:', 'g']);
    const end = await done;
    reader.stdin.end();
    const seconds = (end - start) / 1000;
    // What tmux emitted, byte for byte: the parser benchmark decodes exactly this.
    return { mbPerSec: mb / seconds, seconds, recording: Buffer.concat(recorded) };
  });
}
