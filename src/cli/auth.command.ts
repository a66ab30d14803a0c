/**
 * `tether auth list | create <name> | revoke <name|id> | name <name|id> <new-name>`
 * (docs/pairing.md), on the token store the daemon reads. The daemon checks the store on every
 * authentication, so a revoked token is refused from the moment the store is written; `revoke`
 * then tells the running daemon and waits for its answer, by which time that token's
 * connections are closed (close code 4401).
 */
import { Command, Option } from 'clipanion';
import { DeviceRegistry } from '../auth/devices.js';
import type { TokenRecord } from '../auth/token-file.js';
import { TokenStore } from '../auth/token-store.js';
import { isDomainError } from '../errors.js';
import { loadConfig } from '../config/load.js';
import { resolvePaths, type TetherPaths } from '../config/paths.js';
import { noticeDaemon, readLocalToken } from './daemon-notice.js';
import { CliError, reportFailure } from '../runtime/fail.js';

async function openStore(): Promise<{ store: TokenStore; paths: TetherPaths }> {
  const env = process.env;
  const paths = resolvePaths(env);
  // The config is read so that a bad config is reported here as it is by the daemon.
  await loadConfig(paths, env);
  return { store: await TokenStore.open(paths.authDir), paths };
}

/** Runs `fn` with the store; store refusals become the one-line error. */
async function withStore(cmd: Command, fn: (store: TokenStore, paths: TetherPaths) => void | Promise<void>): Promise<number> {
  try {
    const { store, paths } = await openStore();
    try {
      await fn(store, paths);
    } finally {
      store.close();
    }
    return 0;
  } catch (err) {
    if (isDomainError(err, 'token-not-found')) return reportFailure(new CliError(err.message, 2), cmd.context.stderr);
    return reportFailure(err, cmd.context.stderr);
  }
}

const deviceOf = (r: TokenRecord): string => (r.device ? `${r.device.deviceName} (${r.device.environment}, ${r.device.state})` : '-');

/** The table of `auth list`: one token a line, no secrets. */
export function tokenTable(records: readonly TokenRecord[]): string {
  const rows = [
    ['ID', 'NAME', 'KIND', 'CREATED', 'LAST USED', 'DEVICE'],
    ...records.map((r) => [r.id, r.name, r.kind, r.createdAt, r.lastUsedAt ?? 'never', deviceOf(r)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => [...row[i]!].length)));
  return rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export class AuthListCommand extends Command {
  static override paths = [['auth', 'list']];
  static override usage = Command.Usage({ category: 'Tokens', description: 'List the tokens: id, name, created, last used, device' });
  json = Option.Boolean('--json', false, { description: 'Print JSON' });

  execute(): Promise<number> {
    return withStore(this, (store) => {
      const records = store.list();
      if (this.json) {
        const safe = records.map((r) => ({
          id: r.id,
          name: r.name,
          kind: r.kind,
          createdAt: r.createdAt,
          lastUsedAt: r.lastUsedAt,
          device: r.device ? { deviceName: r.device.deviceName, environment: r.device.environment, state: r.device.state } : null,
        }));
        this.context.stdout.write(JSON.stringify(safe, null, 2) + '\n');
      } else {
        this.context.stdout.write(tokenTable(records));
      }
    });
  }
}

export class AuthCreateCommand extends Command {
  static override paths = [['auth', 'create']];
  static override usage = Command.Usage({
    category: 'Tokens',
    description: 'Create a named token and print it (once: it is stored hashed)',
    examples: [['A token for a script', 'tether auth create ci-bot']],
  });
  name = Option.String({ name: 'name' });

  execute(): Promise<number> {
    return withStore(this, (store) => {
      const { token, record } = store.create(this.name, 'cli');
      this.context.stdout.write(`${token}\n`);
      this.context.stderr.write(`tether: created token "${record.name}" (${record.id}); it is shown only now\n`);
    });
  }
}

export class AuthRevokeCommand extends Command {
  static override paths = [['auth', 'revoke']];
  static override usage = Command.Usage({
    category: 'Tokens',
    description: 'Revoke a token by name or id; its open connections close at once (4401)',
  });
  token = Option.String({ name: 'name|id' });

  execute(): Promise<number> {
    return withStore(this, async (store, paths) => {
      // Read first: revoking the local token removes its file, and the daemon's answer to that
      // token (a 401) says just as well that it holds the new set.
      const local = readLocalToken(paths);
      const r = new DeviceRegistry(store).revoke(this.token);
      this.context.stdout.write(`revoked ${r.name} (${r.id})\n`);
      if (local === null) return;
      const notice = await noticeDaemon(paths, local);
      if (notice.kind === 'failed') {
        this.context.stderr.write(
          `tether: the running daemon did not answer (${notice.why}); it refuses the token at its next request and closes its connections within a second\n`,
        );
      }
    });
  }
}

export class AuthNameCommand extends Command {
  static override paths = [['auth', 'name']];
  static override usage = Command.Usage({ category: 'Tokens', description: 'Give a token a new name' });
  token = Option.String({ name: 'name|id' });
  newName = Option.String({ name: 'new-name' });

  execute(): Promise<number> {
    return withStore(this, (store) => {
      const r = store.rename(this.token, this.newName);
      this.context.stdout.write(`renamed ${r.id} to ${r.name}\n`);
    });
  }
}
