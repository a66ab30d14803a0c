/**
 * Refusals at start-up: one clear line on stderr and a non-zero exit (docs/configuration.md "Start-up").
 */

/** An error the CLI reports as its one line, with the exit code to use. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Writes the one-line refusal and returns the exit code. */
export function reportFailure(err: unknown, stderr: NodeJS.WritableStream): number {
  const message = err instanceof Error ? err.message : String(err);
  stderr.write(`tether: ${message.split('\n')[0]}\n`);
  return err instanceof CliError ? err.exitCode : 1;
}
