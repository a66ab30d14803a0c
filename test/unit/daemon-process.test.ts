import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_ARGS } from '../../src/config/daemon-process.js';

describe('how the daemon process is started', () => {
  it('npm start gives node the same flags as the other launchers', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toContain(`node ${DAEMON_NODE_ARGS.join(' ')} dist/cli/main.js serve`);
  });
});
