import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { DAEMON_ENV, DAEMON_NODE_ARGS, spawnDetachedDaemon } from '../../src/config/daemon-process.js';
import { eventually } from '../helpers/tmux.js';

describe('how the daemon process is started', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('npm start gives node the same flags as the other launchers, and the same allocator setting unless the user set one', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    const start = pkg.scripts.start ?? '';
    expect(start).toContain(`node ${DAEMON_NODE_ARGS.join(' ')} dist/cli/main.js serve`);
    // The script's words before `node`, run by the shell npm uses, give the daemon's environment.
    const prefix = start.slice(start.lastIndexOf('&& ') + 3, start.indexOf(' node '));
    const shown = (env: NodeJS.ProcessEnv) =>
      execFileSync('/bin/sh', ['-c', `${prefix} /usr/bin/env`], { env: { PATH: '/usr/bin:/bin', ...env }, encoding: 'utf8' });
    for (const [key, value] of Object.entries(DAEMON_ENV)) {
      expect(shown({})).toContain(`${key}=${value}\n`);
      expect(shown({ [key]: '65536' })).toContain(`${key}=65536\n`);
    }
  });

  it('a detached daemon gets the allocator setting, a value the user set winning, and no tmux variables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-spawn-'));
    dirs.push(dir);
    // A stand-in for the CLI that prints the environment it was given.
    const cli = join(dir, 'cli.mjs');
    writeFileSync(cli, "process.stdout.write(JSON.stringify(process.env) + '\\n');\n");
    const started = async (env: NodeJS.ProcessEnv, runDir: string): Promise<NodeJS.ProcessEnv> => {
      const { outFile } = spawnDetachedDaemon({ node: process.execPath, cli, runDir, cwd: dir, env });
      return eventually<NodeJS.ProcessEnv | undefined>(
        () => {
          const text = readFileSync(outFile, 'utf8');
          return text.endsWith('\n') ? (JSON.parse(text) as NodeJS.ProcessEnv) : undefined;
        },
        20_000,
        25,
        'the stand-in CLI to print its environment',
      ).then((got) => got ?? {});
    };
    const plain = await started({ PATH: process.env.PATH, TMUX: '/tmp/x,1,0', TMUX_PANE: '%1' }, join(dir, 'a'));
    for (const [key, value] of Object.entries(DAEMON_ENV)) expect(plain[key]).toBe(value);
    expect(plain.TMUX).toBeUndefined();
    expect(plain.TMUX_PANE).toBeUndefined();
    const own = await started({ PATH: process.env.PATH, MALLOC_MMAP_THRESHOLD_: '65536' }, join(dir, 'b'));
    expect(own.MALLOC_MMAP_THRESHOLD_).toBe('65536');
  });
});
