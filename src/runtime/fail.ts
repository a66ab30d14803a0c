/**
 * Refusals at start-up: one clear line on stderr and a non-zero exit (docs/configuration.md "Start-up").
 */

/**
 * An error the CLI reports as its one line, with the exit code to use. The CLI is a transport of
 * its own: it prints any error's message; this class is kept apart from DomainError because it
 * carries the process's exit status (2 for "no such token"), which no code of the registry does.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Any error a start-up step threw, as the start's refusal (its message, one line). */
export function asRefusal(err: unknown): CliError {
  return err instanceof CliError ? err : new CliError(err instanceof Error ? err.message : String(err));
}

/** Writes the one-line refusal and returns the exit code. */
export function reportFailure(err: unknown, stderr: NodeJS.WritableStream): number {
  const message = err instanceof Error ? err.message : String(err);
  stderr.write(`tether: ${message.split('\n')[0]}\n`);
  return err instanceof CliError ? err.exitCode : 1;
}
