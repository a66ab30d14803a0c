/**
 * tether's Gemini CLI home without the CLI (docs/agents.md "Gemini CLI"): made from a user's
 * `.gemini` (their entries and settings linked, tether's hooks an extension of its own), written
 * through as Gemini writes (in place, following the links: the user's files change, a file the
 * user has none of yet is made in their folder), what Gemini made in the home itself moved back
 * to the user's at the next making (merged, a conflict set aside, never written over the user's),
 * an older tether's home taken over, and the pane's variables and words.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { geminiHomePath, writeGeminiHome } from '../../src/agent/gemini/home.js';
import { geminiArgv, geminiEnv } from '../../src/agent/gemini/launch.js';

const ID = '78fb38da-c35b-40c2-85cf-ba20b857c850';
const HOOK = "'/usr/bin/node' '/opt/tether/dist/agent/gemini/hook.js'";
const root = mkdtempSync(join(tmpdir(), 'tether-gemini-home-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A user's home with a `.gemini` of `files` (path → content), and a data dir of tether's. */
function user(files: Record<string, string>): { home: string; dot: string; data: string; env: NodeJS.ProcessEnv } {
  const base = join(root, `u${++n}`);
  const home = join(base, 'home');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, '.gemini', path, '..'), { recursive: true });
    writeFileSync(join(home, '.gemini', path), text);
  }
  mkdirSync(join(home, '.gemini'), { recursive: true });
  return { home, dot: join(home, '.gemini'), data: join(base, 'data'), env: { HOME: home } };
}

/** Every file under `dir` (links not followed) with its content or link target. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, rel);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out[rel] = `-> ${readlinkSync(path)}`;
    else if (st.isFile()) out[rel] = readFileSync(path, 'utf8');
  }
  return out;
}

const isLink = (path: string) => lstatSync(path).isSymbolicLink();

describe("tether's Gemini home", () => {
  it("links the user's entries and settings, keeps tether's hooks in its own extension, and leaves the user's files as they were", () => {
    const u = user({
      'settings.json':
        '// mine\n{"ui": {"theme": "GitHub"}, "hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "mine"}]}]}}',
      'commands/hello.toml': 'prompt = "hi"\n',
      'extensions/myext/gemini-extension.json': '{"name": "myext", "version": "1.0.0"}',
      'extensions/extension-enablement.json': '{}',
      'oauth_creds.json': '{"token": "t"}',
    });
    const before = tree(u.dot);
    const home = writeGeminiHome(u.data, HOOK, u.env);
    expect(home).toBe(geminiHomePath(u.data));
    const dot = join(home, '.gemini');

    expect(readlinkSync(join(dot, 'settings.json'))).toBe(join(u.dot, 'settings.json'));
    expect(readlinkSync(join(dot, 'commands'))).toBe(join(u.dot, 'commands'));
    expect(readlinkSync(join(dot, 'oauth_creds.json'))).toBe(join(u.dot, 'oauth_creds.json'));
    expect(readlinkSync(join(dot, 'tmp'))).toBe(join(u.dot, 'tmp'));
    expect(readlinkSync(join(dot, 'history'))).toBe(join(u.dot, 'history'));
    // The extensions folder is tether's: its extension, and a link to each of the user's.
    expect(isLink(join(dot, 'extensions'))).toBe(false);
    expect(readlinkSync(join(dot, 'extensions', 'myext'))).toBe(join(u.dot, 'extensions', 'myext'));
    expect(readlinkSync(join(dot, 'extensions', 'extension-enablement.json'))).toBe(join(u.dot, 'extensions', 'extension-enablement.json'));
    const manifest = JSON.parse(readFileSync(join(dot, 'extensions', 'tether', 'gemini-extension.json'), 'utf8')) as { name: string };
    expect(manifest.name).toBe('tether');
    const hooks = JSON.parse(readFileSync(join(dot, 'extensions', 'tether', 'hooks', 'hooks.json'), 'utf8')) as {
      hooks: Record<string, { matcher?: string; hooks: { command: string; name: string }[] }[]>;
    };
    expect(Object.keys(hooks.hooks)).toEqual(
      expect.arrayContaining(['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'Notification', 'SessionEnd']),
    );
    expect(hooks.hooks.BeforeTool).toEqual([{ matcher: '*', hooks: [{ type: 'command', name: 'tether', command: HOOK, timeout: 5000 }] }]);

    // The user's files: the same bytes, their tmp and history made (Gemini makes both at each start).
    expect(tree(u.dot)).toEqual(before);
    expect(lstatSync(join(u.dot, 'tmp')).isDirectory() && lstatSync(join(u.dot, 'history')).isDirectory()).toBe(true);
    expect(JSON.stringify(tree(u.home))).not.toContain('hook.js');

    // Made again (the next daemon start): the same home, nothing of the user's changed.
    writeGeminiHome(u.data, HOOK, u.env);
    expect(tree(u.dot)).toEqual(before);
    expect(readlinkSync(join(dot, 'settings.json'))).toBe(join(u.dot, 'settings.json'));
  });

  it("what Gemini writes in place lands in the user's files, a file they have none of yet made in their folder", () => {
    const u = user({ 'settings.json': '{"ui": {"theme": "GitHub"}}' });
    const dot = join(writeGeminiHome(u.data, HOOK, u.env), '.gemini');
    // As Gemini CLI 0.61 writes them (measured: an open with truncation, which follows the link).
    writeFileSync(join(dot, 'settings.json'), '{"ui": {"theme": "Atom One"}}');
    writeFileSync(join(dot, 'state.json'), '{"tipsShown": 1}');
    writeFileSync(join(dot, 'google_accounts.json'), '{"active": null, "old": []}');
    expect(readFileSync(join(u.dot, 'settings.json'), 'utf8')).toBe('{"ui": {"theme": "Atom One"}}');
    expect(readFileSync(join(u.dot, 'state.json'), 'utf8')).toBe('{"tipsShown": 1}');
    expect(existsSync(join(u.dot, 'google_accounts.json'))).toBe(true);
    // The next start keeps them: the home is rewritten, never the user's settings.
    writeGeminiHome(u.data, HOOK, u.env);
    expect(readFileSync(join(u.dot, 'settings.json'), 'utf8')).toBe('{"ui": {"theme": "Atom One"}}');

    // A user without a settings file: Gemini's first write makes theirs.
    const fresh = user({});
    const freshDot = join(writeGeminiHome(fresh.data, HOOK, fresh.env), '.gemini');
    expect(existsSync(join(fresh.dot, 'settings.json'))).toBe(false);
    writeFileSync(join(freshDot, 'settings.json'), '{"security": {"auth": {"selectedType": "gemini-api-key"}}}');
    expect(JSON.parse(readFileSync(join(fresh.dot, 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
  });

  it("moves what Gemini made in the home itself to the user's at the next start: merged, a conflict set aside, never written over", () => {
    const u = user({ 'policies/mine.toml': 'mine', 'notes.json': 'theirs', 'same.json': 'same' });
    const home = writeGeminiHome(u.data, HOOK, u.env);
    const dot = join(home, '.gemini');
    // What Gemini made there during sessions.
    mkdirSync(join(dot, 'skills', 'fmt'), { recursive: true });
    writeFileSync(join(dot, 'skills', 'fmt', 'SKILL.md'), 'a skill');
    rmSync(join(dot, 'policies'));
    mkdirSync(join(dot, 'policies'));
    writeFileSync(join(dot, 'policies', 'auto-saved.toml'), 'saved');
    rmSync(join(dot, 'notes.json'));
    writeFileSync(join(dot, 'notes.json'), 'ours');
    rmSync(join(dot, 'same.json'));
    writeFileSync(join(dot, 'same.json'), 'same');
    mkdirSync(join(dot, 'extensions', 'installed'), { recursive: true });
    writeFileSync(join(dot, 'extensions', 'installed', 'gemini-extension.json'), '{"name": "installed"}');
    writeFileSync(join(dot, 'projects.json'), '{"projects": {}}');
    mkdirSync(join(dot, 'projects.json.lock'));
    writeFileSync(join(dot, 'trustedFolders.json.tmp.1234'), '{}');

    writeGeminiHome(u.data, HOOK, u.env);
    expect(readFileSync(join(u.dot, 'skills', 'fmt', 'SKILL.md'), 'utf8')).toBe('a skill');
    expect(readlinkSync(join(dot, 'skills'))).toBe(join(u.dot, 'skills'));
    expect(tree(join(u.dot, 'policies'))).toEqual({ 'mine.toml': 'mine', 'auto-saved.toml': 'saved' });
    expect(readlinkSync(join(dot, 'policies'))).toBe(join(u.dot, 'policies'));
    expect(readFileSync(join(u.dot, 'extensions', 'installed', 'gemini-extension.json'), 'utf8')).toBe('{"name": "installed"}');
    expect(readlinkSync(join(dot, 'extensions', 'installed'))).toBe(join(u.dot, 'extensions', 'installed'));
    // Both had notes.json: the user's kept, the home's set aside; same.json was the same bytes.
    expect(readFileSync(join(u.dot, 'notes.json'), 'utf8')).toBe('theirs');
    expect(readlinkSync(join(dot, 'notes.json'))).toBe(join(u.dot, 'notes.json'));
    const kept = tree(join(home, 'kept'));
    expect(Object.entries(kept).map(([p, t]) => [p.split('/').slice(1).join('/'), t])).toEqual([['.gemini/notes.json', 'ours']]);
    expect(readlinkSync(join(dot, 'same.json'))).toBe(join(u.dot, 'same.json'));
    // tether's own and what is in flight stay.
    expect(readFileSync(join(dot, 'projects.json'), 'utf8')).toBe('{"projects": {}}');
    expect(existsSync(join(dot, 'projects.json.lock')) && existsSync(join(dot, 'trustedFolders.json.tmp.1234'))).toBe(true);
    expect(existsSync(join(u.dot, 'projects.json')) || existsSync(join(u.dot, 'projects.json.lock'))).toBe(false);
    expect(JSON.stringify(tree(u.home))).not.toContain('hook.js');
  });

  it("takes over an older tether's home: its settings copy set aside, its trusted folders merged, the user's extensions folder no longer linked", () => {
    const u = user({
      'settings.json': '{"ui": {"theme": "GitHub"}}',
      'trustedFolders.json': '{"/b": "TRUST_FOLDER"}',
      'extensions/myext/gemini-extension.json': '{"name": "myext"}',
    });
    const home = geminiHomePath(u.data);
    const dot = join(home, '.gemini');
    mkdirSync(dot, { recursive: true });
    const oldCopy = JSON.stringify({ ui: { theme: 'GitHub' }, hooks: { AfterAgent: [{ hooks: [{ command: HOOK }] }] } });
    writeFileSync(join(dot, 'settings.json'), oldCopy);
    writeFileSync(join(dot, 'trustedFolders.json'), '{"/a": "TRUST_FOLDER", "/b": "DO_NOT_TRUST"}');
    symlinkSync(join(u.dot, 'extensions'), join(dot, 'extensions'));
    symlinkSync(join(u.dot, 'gone.json'), join(dot, 'gone.json'));

    writeGeminiHome(u.data, HOOK, u.env);
    expect(readFileSync(join(u.dot, 'settings.json'), 'utf8')).toBe('{"ui": {"theme": "GitHub"}}');
    expect(readlinkSync(join(dot, 'settings.json'))).toBe(join(u.dot, 'settings.json'));
    expect(Object.values(tree(join(home, 'kept')))).toEqual(expect.arrayContaining([oldCopy]));
    // The folder the older home trusted is added; the user's own answer for /b is kept.
    expect(JSON.parse(readFileSync(join(u.dot, 'trustedFolders.json'), 'utf8'))).toEqual({ '/b': 'TRUST_FOLDER', '/a': 'TRUST_FOLDER' });
    expect(readdirSync(join(u.dot, 'extensions'))).toEqual(['myext']);
    expect(isLink(join(dot, 'extensions'))).toBe(false);
    expect(readdirSync(join(dot, 'extensions')).sort()).toEqual(['extension-enablement.json', 'myext', 'tether']);
    expect(existsSync(join(dot, 'gone.json'))).toBe(false);
    expect(JSON.stringify(tree(u.home))).not.toContain('hook.js');
  });

  it('refuses to make the home in the user’s own Gemini home', () => {
    const u = user({});
    expect(() => writeGeminiHome(u.data, HOOK, { GEMINI_CLI_HOME: geminiHomePath(u.data) })).toThrow("is the user's own Gemini home");
    expect(() => writeGeminiHome(u.data, HOOK, {})).toThrow('neither GEMINI_CLI_HOME nor HOME is set');
    // A home whose .gemini leads to the user's own: nothing there is tether's to move.
    const linked = user({ 'settings.json': '{}' });
    mkdirSync(geminiHomePath(linked.data), { recursive: true });
    symlinkSync(linked.dot, join(geminiHomePath(linked.data), '.gemini'));
    expect(() => writeGeminiHome(linked.data, HOOK, linked.env)).toThrow('is a link');
    expect(tree(linked.dot)).toEqual({ 'settings.json': '{}' });
  });
});

describe('Gemini CLI in its pane', () => {
  it("runs in tether's home with the user's trusted folders file, and keeps tether's extension on when the words choose extensions", () => {
    expect(geminiEnv('/d/gemini-home', { HOME: '/h' })).toEqual({
      GEMINI_CLI_HOME: '/d/gemini-home',
      GEMINI_CLI_TRUSTED_FOLDERS_PATH: '/h/.gemini/trustedFolders.json',
    });
    expect(geminiEnv('/d/gemini-home', { HOME: '/h', GEMINI_CLI_HOME: '/g' }).GEMINI_CLI_TRUSTED_FOLDERS_PATH).toBe(
      '/g/.gemini/trustedFolders.json',
    );
    expect(geminiEnv('/d/gemini-home', { HOME: '/h', GEMINI_CLI_TRUSTED_FOLDERS_PATH: '/t.json' }).GEMINI_CLI_TRUSTED_FOLDERS_PATH).toBe(
      '/t.json',
    );
    expect(geminiEnv(null, { HOME: '/h' })).toEqual({});

    expect(geminiArgv(['-m', 'x'], null)).toEqual(['-m', 'x']);
    expect(geminiArgv(['-e', 'none'], ID)).toEqual(['-e', 'none', '--extensions', 'tether', '--resume', ID]);
    expect(geminiArgv(['--extensions=a,b'], null)).toEqual(['--extensions=a,b', '--extensions', 'tether']);
  });
});
