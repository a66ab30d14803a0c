/**
 * `[agent] command` as a command line: split as a shell would split it, never run by one, with
 * nothing expanded; and which agents count as pi (they get the extension and `--tether`).
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectAgentKind } from '../../src/agent/contract/kinds.js';
import { resolveAgent, resolveAgentProgram } from '../../src/service/agent-programs/agent-program.js';
import { splitCommandLine } from '../../src/config/command-line.js';
import { domainError } from '../helpers/domain-error.js';
import { ROOT } from '../helpers/daemon.js';
import { useProgramDir } from '../helpers/program-dir.js';

describe('splitCommandLine', () => {
  it('splits words as a shell would, honouring quotes and backslashes', () => {
    expect(splitCommandLine('pi')).toEqual(['pi']);
    expect(splitCommandLine('  pi   --model\tx  ')).toEqual(['pi', '--model', 'x']);
    expect(splitCommandLine(`pi --append-system-prompt 'be brief; no $HOME'`)).toEqual([
      'pi',
      '--append-system-prompt',
      'be brief; no $HOME',
    ]);
    expect(splitCommandLine('"/opt/my tools/pi" -p "say \\"hi\\" \\\\ \\$x"')).toEqual(['/opt/my tools/pi', '-p', 'say "hi" \\ $x']);
    expect(splitCommandLine('/opt/my\\ tools/pi a\\|b')).toEqual(['/opt/my tools/pi', 'a|b']);
    expect(splitCommandLine(`pi "" ''`)).toEqual(['pi', '', '']);
    expect(splitCommandLine(`pi a'b'"c"d`)).toEqual(['pi', 'abcd']);
    // Inside double quotes a backslash before another character stays, as in a shell.
    expect(splitCommandLine('pi "a\\nb"')).toEqual(['pi', 'a\\nb']);
    expect(splitCommandLine('pi x~y a#b')).toEqual(['pi', 'x~y', 'a#b']);
  });

  it('refuses what a shell would read differently, or not at all, saying what', () => {
    const why = (text: string): string => {
      try {
        splitCommandLine(text);
      } catch (err) {
        expect(err).toEqual(domainError('command-line-invalid'));
        return (err as Error).message;
      }
      throw new Error(`"${text}" was accepted`);
    };
    expect(why('')).toMatch(/no words/);
    expect(why('   ')).toMatch(/no words/);
    expect(why(`pi 'x`)).toBe(`an unterminated ' quote (from character 4)`);
    expect(why('pi "x')).toBe('an unterminated " quote (from character 4)');
    expect(why('pi \\')).toMatch(/backslash at the end/);
    expect(why('pi $MODEL')).toMatch(/^an unquoted \$ \(character 4\): tether runs the command without a shell/);
    expect(why('pi "$MODEL"')).toMatch(/a \$ inside double quotes/);
    expect(why('pi `id`')).toMatch(/unquoted `/);
    for (const c of ['|', ';', '&', '<', '>', '(', ')', '*', '?', '[']) expect(why(`pi a${c}b`)).toMatch(/unquoted/);
    expect(why('~/bin/pi')).toMatch(/unquoted ~/);
    expect(why('pi # comment')).toMatch(/comment/);
    expect(why(`'' pi`)).toMatch(/empty program name/);
  });
});

describe('which agent is pi', () => {
  const { dir, script } = useProgramDir('tether-agent-cmd-');
  const env = { PATH: `${dir}:/usr/bin:/bin` };

  it('auto: a program named pi, or a link to an installed pi CLI; kind decides for a wrapper', () => {
    const named = script('pi');
    const wrapper = script('pi-work.sh');
    const link = join(dir, 'agent');
    symlinkSync(join(ROOT, 'node_modules/@mariozechner/pi-coding-agent/dist/cli.js'), link);
    expect(detectAgentKind(named)).toBe('pi');
    expect(detectAgentKind(link)).toBe('pi');
    expect(detectAgentKind(wrapper)).toBe('other');
    expect(resolveAgentProgram({ command: 'pi-work.sh', args: [], kind: 'auto' }, env)).toEqual({ argv: [wrapper], kind: 'other' });
    expect(resolveAgentProgram({ command: 'pi-work.sh', args: [], kind: 'pi' }, env)).toEqual({ argv: [wrapper], kind: 'pi' });
    expect(resolveAgentProgram({ command: 'pi', args: [], kind: 'other' }, env)).toEqual({ argv: [named], kind: 'other' });
    expect(resolveAgentProgram({ command: 'agent', args: [], kind: 'auto' }, env).kind).toBe('pi');
  });

  it('the arguments of the command line, then args, then the extension and --tether last', () => {
    const wrapper = script('my agent');
    const launch = resolveAgent({ command: `'my agent' --model "fake/x y"`, args: ['--thinking', 'high'], kind: 'pi' }, env, {
      agentSocket: '/run/a.sock',
    })('/tmp');
    expect(launch.command.slice(0, 5)).toEqual([wrapper, '--model', 'fake/x y', '--thinking', 'high']);
    expect(launch.command.slice(5, 6)).toEqual(['-e']);
    expect(launch.command.at(-1)).toBe('--tether');
    expect(launch.env.TETHER_AGENT_SOCKET).toBe('/run/a.sock');
    const other = resolveAgent({ command: `'my agent' --model x`, args: [], kind: 'other' }, env)('/tmp');
    expect(other.command).toEqual([wrapper, '--model', 'x']);
  });

  it('the bundled pi gets the arguments too; a missing program is named in the error, with how to install its agent', () => {
    const bare = { PATH: '/nonexistent' };
    const { argv, kind } = resolveAgentProgram({ command: 'pi --model fake/a', args: [], kind: 'auto' }, bare);
    expect(argv.slice(0, 1)).toEqual([process.execPath]);
    expect(argv.slice(2)).toEqual(['--model', 'fake/a']);
    expect(kind).toBe('pi');
    expect(() => resolveAgentProgram({ command: 'claude --x', args: [], kind: 'auto' }, bare)).toThrow(
      'the agent program "claude" ([agent] command) was not found on PATH: Claude Code is not installed: install it with "npm install -g @anthropic-ai/claude-code", or set [agent] command in the config to a program on PATH or a full path',
    );
    expect(() => resolveAgentProgram({ command: 'my-codex', args: [], kind: 'codex' }, bare, '[agents.cx]')).toThrow(
      'the agent program "my-codex" ([agents.cx] command) was not found on PATH: Codex is not installed: install it with "npm install -g @openai/codex", or set [agents.cx] command in the config to a program on PATH or a full path',
    );
    expect(() => resolveAgentProgram({ command: 'aider', args: [], kind: 'auto' }, bare)).toThrow(
      'the agent program "aider" ([agent] command) was not found on PATH: set [agent] command in the config to a program on PATH or a full path',
    );
  });
});
