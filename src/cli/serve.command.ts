/** `tether serve`: the daemon in the foreground (docs/configuration.md "Start-up"). */
import { Writable } from 'node:stream';
import { Command, Option } from 'clipanion';
import { reportFailure } from '../runtime/fail.js';
import { activityDelaysOf, restoreRetryMs } from './test-seams.js';

/** Where log lines go when they are kept off stderr. */
const discard = (): Writable => new Writable({ write: (_chunk, _enc, done) => done() });

export class ServeCommand extends Command {
  static override paths = [['serve']];
  static override usage = Command.Usage({
    description: 'Run the tether daemon in the foreground',
    details: `
      Reattaches to every tether session in tmux, creates the default session when there is
      none, and prints one line on stdout once listening: the URL with the local token.
      Logs go to stderr and to the log file in the data directory (--no-log-stderr: only to
      the file; a refusal to start is still one line on stderr). SIGINT or SIGTERM stops the
      daemon; the tmux sessions keep running.
    `,
  });

  logStderr = Option.Boolean('--log-stderr', true, {
    description: 'Copy log lines to stderr (--no-log-stderr: the log file only, as detached daemons run)',
  });

  async execute(): Promise<number> {
    // Signal handlers go in before anything starts: the URL line is printed while starting, and
    // a SIGTERM right after it must still stop the daemon cleanly, not kill it.
    let stopRequested = false;
    let wake: (() => void) | null = null;
    const onSignal = (): void => {
      stopRequested = true;
      wake?.();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      // Loaded here: the other commands start without the daemon's libraries.
      const { runDaemon } = await import('../daemon/root.js');
      const daemon = await runDaemon({
        env: process.env,
        stdout: this.context.stdout,
        stderr: this.logStderr ? this.context.stderr : discard(),
        cwd: process.cwd(),
        restoreRetryMs: restoreRetryMs(process.env),
        activityDelays: activityDelaysOf(process.env),
      });
      if (!stopRequested) await new Promise<void>((resolve) => (wake = resolve));
      await daemon.stop();
      return 0;
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
