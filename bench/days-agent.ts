/**
 * The agent-like program the days soak (bench/days.bench.ts) runs in each session's pane, and
 * the bench's hold on it. One small perl program per pane (no process per line, no model): it
 * first fills the pane's history (a long session's scrollback is full), then does what its
 * control pipe says, one command after another:
 *
 * - `burst <lines> <rate>`: coloured tool-result lines at `rate` a second, each over a spinner
 *   that is cleared and redrawn, every fifth an update of the line above it (cursor up);
 * - `think <seconds>`: the spinner redrawn in place five times a second, and a status panel of
 *   the screen's last rows redrawn in place once a second (save cursor, move, erase, restore);
 * - `steady <rate> <seconds>`: `burst` at an even pace for a time (the probe);
 * - `flood <bytes>`: lines as fast as the pane takes them, past the daemon's ring;
 * - `dialog <n>`: a permission dialog drawn, then nothing until the next command (an ask);
 * - `ack <n>`: writes `n` to its ack file once every command before it is done.
 *
 * Between lines it looks at its hold file: while it exists nothing is printed (the bench holds a
 * pane still to compare screens with tmux); commands wait, an `ack` is still answered once the
 * commands before it are done. Whatever is typed into the pane (a prompt, an
 * answer's keys) the terminal echoes, as a shell's would; the program reads it and appends it to
 * its input file, so the bench knows when a prompt reached the agent. It ends when its pane's
 * shell, or the bench's dir, is gone.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const AGENT_PL = String.raw`use strict; use warnings; use utf8; use Fcntl; use Time::HiRes qw(sleep time);
binmode STDOUT, ':utf8'; $| = 1;
my ($dir, $tag, $prefill, $prefillS) = @ARGV; $prefillS //= 0;
my $ctl = "$dir/$tag.ctl"; my $hold = "$dir/$tag.hold"; my $ackf = "$dir/$tag.ack"; my $inf = "$dir/$tag.in";
sysopen(my $in, $ctl, O_RDWR) or die "ctl: $!";
my $parent = getppid();
my @spin = ('⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏');
my ($i, $s, $buf, @queue) = (0, 0, '');
sub alive { exit 0 if getppid() != $parent || !-d $dir; }
sub held { while (-e $hold) { alive(); sleep 0.05; drain(0); } }
sub drain {
  my ($t) = @_;
  my $rin = ''; vec($rin, fileno($in), 1) = 1; vec($rin, fileno(STDIN), 1) = 1;
  return if select(my $rout = $rin, undef, undef, $t) <= 0;
  if (vec($rout, fileno($in), 1)) { my $n = sysread($in, my $c, 65536); $buf .= $c if $n; push @queue, $1 while $buf =~ s/^([^\n]*)\n//; }
  if (vec($rout, fileno(STDIN), 1)) {
    my $n = sysread(STDIN, my $c, 65536);
    exit 0 if defined $n && $n == 0;
    if ($n) { open(my $f, '>>', $inf) or die; print $f $c; close $f; }
  }
}
sub out { print @_ or exit 0; }
sub line {
  $i++;
  my $up = $i % 5 == 0 ? "\e[1A" : '';
  out(sprintf("\r\e[2K%s\r\e[2K\e[3%dm●\e[0m \e[1mEdit\e[0m(src/%s/module-%d.ts) \e[2m+%d -%d lines, step %d\e[0m\n",
    $up, $i % 7 + 1, $tag, $i % 40, $i % 97, $i % 13, $i));
  out(sprintf("\e[36m%s\e[0m Working… \e[2m(step %d · esc to interrupt)\e[0m", $spin[$i % 10], $i));
}
sub panel {
  $s++;
  out("\e7\e[36;1H");
  for my $r (0..3) { out(sprintf("\e[%d;1H\e[2K\e[4%dm \e[0m %s status %d.%d \e[2mtokens %d · %ds\e[0m", 36 + $r, ($s + $r) % 7 + 1, $tag, $s, $r, $s * 37 % 100000, $s)); }
  out("\e8");
}
# The history is filled with the kinds of lines the program prints afterwards, tool lines and a
# flood's in about the share a session's history holds after hours of work (seven to three), so
# that a capture of it (the daemon's warm capture) is about as large after the warm-up as later.
# At an even pace over $prefillS seconds (0: as fast as the pane takes it), a batch at a time.
my $p0 = time;
for my $k (1..$prefill) {
  if ($k % 1000 < 300) { out(sprintf("\e[3%dm%s flood %d\e[0m %s\n", $k % 7 + 1, $tag, $k, 'x' x 100)); }
  else { out(sprintf("\e[3%dm●\e[0m \e[1mEdit\e[0m(src/%s/module-%d.ts) \e[2m+%d -%d lines, step %d\e[0m\n", $k % 7 + 1, $tag, $k % 40, $k % 97, $k % 13, $k)); }
  if ($k % 100 == 0) { alive(); my $w = $p0 + $prefillS * $k / $prefill - time; sleep($w > 0.05 ? $w : 0.05 * ($k % 400 == 0)); }
}
open(my $a0, '>', $ackf) or die; print $a0 "0\n"; close $a0;
while (1) {
  alive();
  drain(@queue ? 0 : 0.25);
  next unless @queue;
  my ($cmd, @a) = split / /, shift @queue;
  if ($cmd eq 'burst' || $cmd eq 'steady') {
    my ($rate) = ($a[1]); my $n = $cmd eq 'burst' ? $a[0] : int($a[1] * $a[0]); $rate = $a[0] if $cmd eq 'steady';
    my $t0 = time;
    for my $k (1..$n) { held(); line(); my $due = $t0 + $k / $rate; my $w = $due - time; drain($w) if $w > 0; }
  } elsif ($cmd eq 'think') {
    my $end = time + $a[0]; my $k = 0;
    while (time < $end) { held(); $k++; out(sprintf("\r\e[2K\e[36m%s\e[0m Thinking… \e[2m(%ds)\e[0m", $spin[$k % 10], $k / 5)); panel() if $k % 5 == 0; drain(0.2); }
  } elsif ($cmd eq 'flood') {
    my $left = $a[0];
    while ($left > 0) { held(); my $l = sprintf("\e[3%dm%s flood %d\e[0m %s\n", $left % 7 + 1, $tag, $left, 'x' x 100); out($l); $left -= length($l); }
  } elsif ($cmd eq 'dialog') {
    held();
    out(sprintf("\r\e[2K\n\e[1m╭─ Bash command ────────────────────────────╮\e[0m\n│ npm test -- --run %s-%d\n│ Do you want to proceed?\n│ \e[36m❯ 1. Yes\e[0m\n│   2. No, and tell Claude what to do differently (esc)\n╰───────────────────────────────────────────╯\n", $tag, $a[0]));
  } elsif ($cmd eq 'ack') {
    open(my $f, '>', "$ackf.tmp") or die; print $f "$a[0]\n"; close $f; rename("$ackf.tmp", $ackf);
  }
}
`;

/** The bench's side of one pane's program: its control pipe, its hold switch, its ack and input files. */
export class PaneProgram {
  private readonly ctl: string;
  private readonly holdFile: string;
  private readonly ackFile: string;
  private readonly inFile: string;
  private fd: number | null = null;
  private acks = 0;

  constructor(
    private readonly dir: string,
    readonly tag: string,
  ) {
    this.ctl = join(dir, `${tag}.ctl`);
    this.holdFile = join(dir, `${tag}.hold`);
    this.ackFile = join(dir, `${tag}.ack`);
    this.inFile = join(dir, `${tag}.in`);
    rmSync(this.ackFile, { force: true });
    rmSync(this.inFile, { force: true });
    if (!existsSync(this.ctl)) execFileSync('mkfifo', ['-m', '600', this.ctl]);
  }

  /** The shell line that starts the program in its pane (typed by the bench). */
  commandLine(script: string, prefillLines: number, prefillS = 0): string {
    return `exec perl ${script} ${this.dir} ${this.tag} ${prefillLines} ${prefillS}`;
  }

  /** Queues one command (the pipe is opened read-write, so a write never blocks on a reader not there yet). */
  send(command: string): void {
    this.fd ??= openSync(this.ctl, 'r+');
    writeSync(this.fd, `${command}\n`);
  }

  /** Whether the program has filled its history (it writes ack 0 then). */
  get started(): boolean {
    return existsSync(this.ackFile);
  }

  /** Queues an ack; resolves to the number to wait for with `acked`. */
  ack(): number {
    this.send(`ack ${++this.acks}`);
    return this.acks;
  }

  /** Whether every command before ack `n` is done. */
  acked(n: number): boolean {
    try {
      return Number(readFileSync(this.ackFile, 'utf8').trim()) >= n;
    } catch {
      return false;
    }
  }

  hold(on: boolean): void {
    if (on) writeFileSync(this.holdFile, '');
    else rmSync(this.holdFile, { force: true });
  }

  /** What was typed into the pane so far (prompts, answers' keys), as the program read it. */
  typed(): string {
    try {
      return readFileSync(this.inFile, 'latin1');
    } catch {
      return '';
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.ctl, { force: true });
    rmSync(this.holdFile, { force: true });
  }
}

/** Writes the program into `dir` (made if missing); answers its path. */
export function writeAgentProgram(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const script = join(dir, 'days-agent.pl');
  writeFileSync(script, AGENT_PL);
  return script;
}
