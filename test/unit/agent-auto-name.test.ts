/**
 * Auto-naming against a real tmux server (private socket) and a real child process standing in
 * for pi: a script that records its argv and what it read on stdin, then answers. What a user
 * sees is the session's description (and who set it).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AutoNamer, cleanTitle, namingPrompt } from '../../src/agent/hub/auto-name.js';
import { silentLogger } from '../../src/log.js';
import { readUserOption, setUserOption } from '../../src/tmux/sessions/sessions.js';
import { privateTmux, type PrivateTmux } from '../helpers/tmux.js';

describe('auto-naming', () => {
  let tmux: PrivateTmux;
  let n = 0;
  beforeAll(async () => {
    tmux = await privateTmux();
  });
  afterAll(async () => {
    await tmux.cleanup();
  });

  /** A fake pi: records argv (one per line) and stdin, then prints `answer` (or fails, or hangs). */
  function fakePi(answer: string, mode: 'ok' | 'fail' | 'hang' = 'ok'): { bin: string; argv: () => string[] | null; stdin: () => string } {
    const id = ++n;
    const bin = join(tmux.dir, `pi-${id}.sh`);
    const argvFile = join(tmux.dir, `argv-${id}`);
    const stdinFile = join(tmux.dir, `stdin-${id}`);
    const answerFile = join(tmux.dir, `answer-${id}`);
    writeFileSync(answerFile, `${answer}\n`);
    const body = mode === 'fail' ? 'echo "model not found" >&2; exit 1' : mode === 'hang' ? 'exec sleep 30' : `cat "${answerFile}"`;
    writeFileSync(bin, `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done > "${argvFile}"\ncat > "${stdinFile}"\n${body}\n`);
    chmodSync(bin, 0o755);
    return {
      bin,
      argv: () => (existsSync(argvFile) ? readFileSync(argvFile, 'utf8').split('\0').slice(0, -1) : null),
      stdin: () => readFileSync(stdinFile, 'utf8'),
    };
  }

  async function session(): Promise<string> {
    const name = `s${++n}`;
    await tmux.tmux('new-session', '-d', '-s', name, '--', 'cat');
    return name;
  }

  function namer(bin: string, opts: { timeoutMs?: number; described?: (s: string) => void } = {}) {
    return new AutoNamer({ cli: tmux.cli, command: [bin], model: 'fake/namer', env: { ...process.env }, log: silentLogger, ...opts });
  }

  it('names a session after three messages with one closed-stdin call of pi, without tools, session, extensions or context', async () => {
    const pi = fakePi('"Fix flaky login tests."');
    const described: string[] = [];
    const s = await session();
    const a = namer(pi.bin, { described: (id) => described.push(id) });
    a.consider(s, ['fix the login test'], 1);
    a.consider(s, ['fix the login test', 'it is flaky'], 2);
    await a.settled();
    expect(pi.argv()).toBeNull();
    a.consider(s, ['fix the login test', 'it is flaky', 'on CI only; $(rm -rf ~) `x`'], 3);
    await a.settled();
    expect(await readUserOption(tmux.cli, s, '@description')).toBe('Fix flaky login tests');
    expect(await readUserOption(tmux.cli, s, '@description-source')).toBe('auto');
    expect(described).toEqual([s]);
    const argv = pi.argv()!;
    // pi's flags for one printed answer: no session kept, no tools, no extensions, skills, templates or context files.
    const bare = '--print --no-session --no-tools --no-extensions --no-skills --no-prompt-templates --no-context-files';
    for (const flag of bare.split(' ')) expect(argv).toContain(flag);
    expect(argv.slice(argv.indexOf('--thinking'), argv.indexOf('--thinking') + 2)).toEqual(['--thinking', 'off']);
    expect(argv.slice(argv.indexOf('--model'), argv.indexOf('--model') + 2)).toEqual(['--model', 'fake/namer']);
    // The messages travel inside one argv element, untouched by any shell.
    expect(argv[argv.length - 1]).toContain('on CI only; $(rm -rf ~) `x`');
    expect(pi.stdin()).toBe('');
  });

  it('never names twice, and never over a manual description', async () => {
    const pi = fakePi('Second Title');
    const s1 = await session();
    const a = namer(pi.bin);
    a.consider(s1, ['a', 'b', 'c'], 3);
    await a.settled();
    await setUserOption(tmux.cli, s1, '@description', '');
    await setUserOption(tmux.cli, s1, '@description-source', '');
    a.consider(s1, ['a', 'b', 'c'], 4);
    await a.settled();
    expect(await readUserOption(tmux.cli, s1, '@description')).toBe('');

    const s2 = await session();
    await setUserOption(tmux.cli, s2, '@description-source', 'manual');
    const pi2 = fakePi('Should Not Appear');
    const b = namer(pi2.bin);
    b.consider(s2, ['a', 'b', 'c'], 3);
    await b.settled();
    expect(pi2.argv()).toBeNull();
    expect(await readUserOption(tmux.cli, s2, '@description')).toBeNull();
  });

  it('a failing or hanging call changes nothing', async () => {
    const s = await session();
    const failing = fakePi('', 'fail');
    const f = namer(failing.bin);
    f.consider(s, ['a', 'b', 'c'], 3);
    await f.settled();
    expect(failing.argv()).not.toBeNull();
    const slow = namer(fakePi('', 'hang').bin, { timeoutMs: 300 });
    const s2 = await session();
    const started = Date.now();
    slow.consider(s2, ['a', 'b', 'c'], 3);
    await slow.settled();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await readUserOption(tmux.cli, s, '@description')).toBeNull();
    expect(await readUserOption(tmux.cli, s, '@description-source')).toBeNull();
    expect(await readUserOption(tmux.cli, s2, '@description')).toBeNull();
  });

  it('is off without a naming model', async () => {
    const pi = fakePi('Title');
    const s = await session();
    const a = new AutoNamer({ cli: tmux.cli, command: [pi.bin], model: '', env: process.env, log: silentLogger });
    a.consider(s, ['a', 'b', 'c'], 3);
    await a.settled();
    expect(pi.argv()).toBeNull();
  });

  it('cleans the answer to at most four words', () => {
    expect(cleanTitle('Title: "Refactor the auth module."\nmore')).toBe('Refactor the auth module');
    expect(cleanTitle('**Debug flaky CI pipeline today please**')).toBe('Debug flaky CI pipeline');
    expect(cleanTitle('\n\n')).toBeNull();
    expect(namingPrompt(['a\nb'])).toContain('Message 1: a b');
  });
});
