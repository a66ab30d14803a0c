/** `tether serve`: the daemon in the foreground (decisions.md "Start-up"). */
import { Command } from 'clipanion';
import { runDaemon } from './daemon.js';
import { reportFailure } from './fail.js';

export class ServeCommand extends Command {
  static override paths = [['serve']];
  static override usage = Command.Usage({
    description: 'Run the tether daemon in the foreground',
    details: `
      Reattaches to every tether session in tmux, creates the default session when there is
      none, and prints one line on stdout once listening: the URL with the local token.
      Logs go to stderr and to the log file in the data directory. SIGINT or SIGTERM stops
      the daemon; the tmux sessions keep running.
    `,
  });

  async execute(): Promise<number> {
    let daemon;
    try {
      daemon = await runDaemon({ env: process.env, stdout: this.context.stdout, stderr: this.context.stderr, cwd: process.cwd() });
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
    const running = daemon;
    return new Promise<number>((resolve) => {
      const onSignal = (): void => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        running.stop().then(
          () => resolve(0),
          () => resolve(1),
        );
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
  }
}
