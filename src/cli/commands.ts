/**
 * The `tether` commands on clipanion, run by the executable (main.ts) once it has tuned the
 * heap. The CLI is the composition root and the only code that reads argv and the environment.
 */
import { Builtins, Cli } from 'clipanion';
import { AttachCommand } from './attach.command.js';
import { AuthCreateCommand, AuthListCommand, AuthNameCommand, AuthRevokeCommand } from './auth.command.js';
import { RestartCommand, StopCommand } from './lifecycle.command.js';
import { PairCommand } from './pair.command.js';
import { ServeCommand } from './serve.command.js';
import { ServiceInstallCommand, ServiceStatusCommand, ServiceUninstallCommand } from './service.command.js';
import { StatusCommand } from './status.command.js';
import { packageVersion } from '../config/version.js';

const cli = new Cli({ binaryLabel: 'tether', binaryName: 'tether', binaryVersion: packageVersion() });
cli.register(ServeCommand);
cli.register(AttachCommand);
cli.register(PairCommand);
cli.register(StatusCommand);
cli.register(StopCommand);
cli.register(RestartCommand);
for (const c of [ServiceInstallCommand, ServiceUninstallCommand, ServiceStatusCommand]) cli.register(c);
for (const c of [AuthListCommand, AuthCreateCommand, AuthRevokeCommand, AuthNameCommand]) cli.register(c);
cli.register(Builtins.HelpCommand);
cli.register(Builtins.VersionCommand);

/** Runs the command `args` name and exits with its status. */
export async function runCli(args: readonly string[]): Promise<void> {
  await cli.runExit([...args]);
}
