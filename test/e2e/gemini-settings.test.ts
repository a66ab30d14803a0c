/**
 * A setting changed inside a tether session of the real Gemini CLI (0.61.0, against the fake
 * Gemini API) is the user's own (docs/agents.md "Gemini CLI"): a person opens `/settings` and
 * turns Vim Mode on, as they would, waiting for the dialog before each key; Gemini writes it
 * through tether's home into the user's own `settings.json` (not a copy of tether's), the daemon
 * is stopped and started again, and the change is still in the user's file, without tether's
 * hooks, with the user's own hooks as they were, and a new session starts in Vim mode. The files
 * Gemini writes at its start (state.json) are made in the user's folder too.
 */
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isAgentTurn, sideReply } from '../../testkit/fake-gemini.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { AGENT_START_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { geminiParts } from '../helpers/agent-parts.js';
import { still } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

const TEST_MS = 300_000;
const STEP_MS = 30_000;
const READY = ['Gemini CLI v0.61.0', 'Type your message'];

type Settings = Record<string, Record<string, unknown> | undefined>;

describe("a Gemini setting changed in a tether session is in the user's own settings file", () => {
  let original: Settings = {};
  const agent = useRealAgent({
    prefix: 'tether-gemini-settings-',
    start: geminiParts(
      (req) => (isAgentTurn(req) ? { text: 'ok' } : sideReply(req)),
      (home) => {
        original = JSON.parse(readFileSync(home.settingsFile, 'utf8')) as Settings;
      },
    ),
    toml: (apns) => agentWithPushToml('gemini', [], apns),
    phone: 'e6'.repeat(32),
    session: { name: 'gs', agent: 'gemini', ready: READY },
  });
  const { fx, explained } = agent;
  const userFile = () => agent.home.settingsFile;
  const userSettings = () => JSON.parse(readFileSync(userFile(), 'utf8')) as Settings;
  const tetherDot = () => join(fx.home.dataDir, 'agents', 'gemini-home', '.gemini');
  /** The screen's row that names `label`, or '' (the error shows the screen). */
  const row = async (label: string) => (await agent.m.text()).split('\n').find((l) => l.includes(label)) ?? '';

  test(
    '/settings turns Vim Mode on: written to the user’s file at once, still there after the daemon starts again, without tether’s hooks',
    async () => {
      expect(readlinkSync(join(tetherDot(), 'settings.json'))).toBe(userFile());
      await explained(still(agent.m, STEP_MS, 'Gemini ready and quiet'));

      await agent.type('/settings');
      await explained(agent.shows(['Vim Mode', 'Apply To'], STEP_MS, 'the settings dialog'));
      await explained(still(agent.m, STEP_MS, 'the settings dialog drawn'));
      expect(await row('Vim Mode')).toContain('false');
      agent.m.stream.sendKey('enter');
      await explained(eventually(async () => (await row('Vim Mode')).includes('true'), STEP_MS, 100, 'Vim Mode shown on'));
      await explained(eventually(() => userSettings().general?.vimMode === true, STEP_MS, 100, "vimMode in the user's settings.json"));

      await explained(still(agent.m, STEP_MS, 'the dialog quiet after the toggle'));
      agent.m.stream.sendKey('escape');
      await explained(eventually(async () => !(await agent.m.text()).includes('Apply To'), STEP_MS, 100, 'the settings dialog closed'));

      // Gemini's files of its start are made where the user's own gemini finds them.
      expect(lstatSync(join(tetherDot(), 'state.json')).isSymbolicLink()).toBe(true);
      expect(existsSync(join(agent.home.home, '.gemini', 'state.json'))).toBe(true);

      expect(await fx.d.stop()).toBe(0);
      await fx.startAgain(60_000);

      const after = userSettings();
      expect(after).toEqual({ ...original, general: { ...original.general, vimMode: true } });
      expect(after.hooks).toEqual(original.hooks);
      expect(readFileSync(userFile(), 'utf8')).not.toContain('hook.js');
      expect(readlinkSync(join(tetherDot(), 'settings.json'))).toBe(userFile());

      // A session made by the new daemon runs with the person's setting.
      const r = await fx.json('POST', '/sessions', { name: 'gs2', agent: 'gemini', cwd: agent.home.cwd });
      expect(r.status, await r.clone().text()).toBe(201);
      agent.watch('gs2');
      await explained(agent.shows(['Gemini CLI v0.61.0', '[INSERT]'], AGENT_START_MS, 'a new Gemini session in Vim mode'));
      expect(userSettings()).toEqual(after);
    },
    TEST_MS,
  );
});
