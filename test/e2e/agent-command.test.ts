/**
 * `[agent] command` as a command line, with the real pi and the fake model: the arguments reach
 * pi (it asks the model the `--model` names, not its default) and pi keeps the tether extension
 * (its agent state is reported); a wrapper script not named pi, with `kind = "pi"`, keeps the
 * extension too; a bad command line is refused at start with one line naming the key and file.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonHome, ROOT, runCli } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { useFakePi } from '../helpers/fake-pi-fixture.js';
import { lastOfRole, messageText } from '../helpers/fake-model.js';
import { FAKE_NAMING_MODEL, FAKE_PROVIDER } from '../helpers/pi-home.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** pi starts slowly on two shared cores: waits are generous, never sleeps. */
const PI_START_MS = 60_000;
const TURN_MS = 45_000;
const PI_LINK = join(ROOT, 'node_modules/.bin/pi');
const PI_CLI = join(ROOT, 'node_modules/@mariozechner/pi-coding-agent/dist/cli.js');

describe('[agent] command with arguments, and kind', () => {
  const fp = useFakePi((req) => ({ text: `answered by ${req.model}: ${messageText(lastOfRole(req, 'user')).slice(0, 30)}` }));
  let tmux: PrivateTmux;
  let scripts: string;

  beforeAll(async () => {
    tmux = await privateTmux();
    scripts = mkdtempSync(join(tmpdir(), 'tether-agent-scripts-'));
  }, 30_000);

  afterAll(async () => {
    await tmux?.cleanup();
    rmSync(scripts, { recursive: true, force: true });
  });

  /** A daemon for the tests of the enclosing describe, its default agent configured by `agentToml`. */
  function serve(agentToml: () => string) {
    const fx = useDaemon(() => `[agent]\ndefault_session = "pi-main"\n${agentToml()}`, {
      extraEnv: () => fp.pi.env,
      startTimeoutMs: 30_000,
      setupTimeoutMs: 60_000,
    });
    const item = async () =>
      ((await (await fx.d.get('/sessions')).json()) as { id: string; agentState: string | null }[]).find((s) => s.id === 'pi-main');
    const type = async (text: string) => {
      const post = (body: unknown) => fx.json('POST', '/sessions/pi-main/input', body);
      expect((await post({ type: 'keys', data: text })).status).toBe(204);
      expect((await post({ type: 'key', name: 'enter' })).status).toBe(204);
    };
    /** Types `text` as a prompt; resolves with the model requests that carry it, once one came. */
    const ask = async (text: string) => {
      const seen = fp.model.requests.length;
      await type(text);
      const asked = () => fp.model.requests.slice(seen).filter((r) => messageText(lastOfRole(r, 'user')) === text);
      await eventually(() => asked().length > 0, TURN_MS, 50, 'the prompt to reach the model');
      return asked();
    };
    return { item, ask };
  }

  describe('a command line with arguments', () => {
    const { item, ask } = serve(() => `command = ${JSON.stringify(`'${PI_LINK}' --model "${FAKE_PROVIDER}/${FAKE_NAMING_MODEL}"`)}\n`);

    it('a command line with arguments reaches pi, which keeps the extension', { timeout: 180_000 }, async () => {
      // The extension reports the agent's state: pi got -e and --tether after the configured arguments.
      await eventually(async () => (await item())?.agentState === 'idle', PI_START_MS, 200, 'pi-main to report idle');
      const asked = await ask('which model are you');
      // The settings' default model is fake-agent (FAKE_AGENT_MODEL): only --model from the command line picks fake-namer.
      expect(asked.map((r) => r.model)).toEqual([FAKE_NAMING_MODEL]);
      await eventually(async () => (await item())?.agentState === 'awaiting-input', TURN_MS, 100, 'pi-main to await input');
    });
  });

  describe('a wrapper script', () => {
    const wrapper = () => join(scripts, 'work agent.sh');
    const ran = () => join(scripts, 'wrapper-ran');
    // The wrapper is written before the daemon starts the session that runs it.
    beforeAll(() => {
      writeFileSync(wrapper(), `#!/bin/sh\necho "$@" > '${ran()}'\nexec '${process.execPath}' '${PI_CLI}' "$@"\n`);
      chmodSync(wrapper(), 0o755);
    });
    const { item, ask } = serve(
      () => `command = ${JSON.stringify(`'${wrapper()}'`)}\nargs = ["--model", "${FAKE_PROVIDER}/${FAKE_NAMING_MODEL}"]\nkind = "pi"\n`,
    );

    it('a wrapper script not named pi, with kind = "pi", keeps the extension and gets args', { timeout: 180_000 }, async () => {
      await eventually(async () => (await item())?.agentState === 'idle', PI_START_MS, 200, 'the wrapped pi to report idle');
      const asked = await ask('hello through the wrapper');
      expect(asked[0]?.model).toBe(FAKE_NAMING_MODEL);
      // What the wrapper was given: the configured args, then the extension, --tether last.
      expect(readFileSync(ran(), 'utf8').trim()).toMatch(
        new RegExp(`^--model ${FAKE_PROVIDER}/${FAKE_NAMING_MODEL} -e \\S+/extension/index\\.js --tether$`),
      );
    });
  });

  it('a bad command line is refused at start with one line naming the key and the file', async () => {
    const home = daemonHome(tmux.socket, `[agent]\ncommand = "pi --model 'x"\n`);
    try {
      const { code, stdout, stderr } = await runCli(['serve'], home.env);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toBe(
        `tether: ${home.configFile}: agent.command must be a command line: the program, then its arguments, quoted as in a shell (no variables, globs, pipes or redirections), got "pi --model 'x": it has an unterminated ' quote (from character 12)\n`,
      );
    } finally {
      home.cleanup();
    }
  });
});
