import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import envPaths from 'env-paths';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentKinds } from '../../src/agent/contract/kinds.js';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig, parseBindAddress } from '../../src/config/load.js';
import { resolvePaths, type TetherPaths } from '../../src/config/paths.js';
import { TetherConfigSchema } from '../../src/config/config.checks.js';
import type { TetherConfig } from '../../src/config/schema.js';

const DEFAULTS: TetherConfig = {
  bindAddress: '127.0.0.1:7777',
  publicBaseUrl: '',
  name: '',
  tls: true,
  agent: { command: 'pi', args: [], kind: 'auto', default_session: 'pi-main', naming_model: '', restore: true },
  tmux: { socket: '' },
  stream: { ring_kb: 4096, ping_interval_s: 20 },
  buffer: { session_cap_mb: 100, global_cap_mb: 1024, min_free_gb: 1, idle_days: 30, watchdog_interval_s: 30 },
  push: {
    team_id: '',
    key_id: '',
    key_path: '',
    bundle_id: '',
    sandbox_url: 'https://api.sandbox.push.apple.com',
    production_url: 'https://api.push.apple.com',
    events: ['awaiting-input', 'agent-exited', 'unrestorable', 'prompt-failed'],
    usage_thresholds: [80, 95],
  },
  uploads: { dir: '', max_mb: 25, keep_days: 7 },
  worktrees: { dir: '' },
  discovery: { mdns: true },
};

let dir: string;
let paths: TetherPaths;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tether-config-'));
  paths = resolvePaths({ HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data') }, 'linux');
  await mkdir(path.dirname(paths.configFile), { recursive: true });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const writeToml = (text: string): Promise<void> => writeFile(paths.configFile, text);
const writeJson = (value: unknown): Promise<void> => writeFile(paths.legacyConfigFile, JSON.stringify(value, null, 2));

/** Loads and returns the ConfigError it must throw. */
async function configError(env: NodeJS.ProcessEnv = {}): Promise<ConfigError> {
  const err: unknown = await loadConfig(paths, env, { agentKinds: agentKinds() }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  const e = err as ConfigError;
  expect(e.message).not.toMatch(/[\r\n]/);
  return e;
}

describe('resolvePaths', () => {
  it('follows the XDG variables and puts everything else under the data dir', () => {
    const p = resolvePaths({ HOME: '/home/u', XDG_CONFIG_HOME: '/cfg', XDG_DATA_HOME: '/dat' }, 'linux');
    expect(p).toEqual({
      configFile: '/cfg/tether/config.toml',
      legacyConfigFile: '/cfg/tether/config.json',
      dataDir: '/dat/tether',
      buffersDir: '/dat/tether/buffers',
      tlsDir: '/dat/tether/tls',
      authDir: '/dat/tether/auth',
      logFile: '/dat/tether/tether.log',
      runDir: '/dat/tether/run',
    });
  });

  it('falls back to ~/.config and ~/.local/share, ignoring empty and relative XDG values', () => {
    for (const xdg of [{}, { XDG_CONFIG_HOME: '', XDG_DATA_HOME: '' }, { XDG_CONFIG_HOME: 'rel/cfg', XDG_DATA_HOME: 'rel/dat' }]) {
      const p = resolvePaths({ HOME: '/home/u', ...xdg }, 'linux');
      expect(p.configFile).toBe('/home/u/.config/tether/config.toml');
      expect(p.dataDir).toBe('/home/u/.local/share/tether');
    }
  });

  it('lets TETHER_CONFIG name the file and TETHER_DATA_DIR the data dir', () => {
    const p = resolvePaths({ HOME: '/home/u', TETHER_CONFIG: '/etc/tether/main.toml', TETHER_DATA_DIR: '/var/lib/tether' }, 'linux');
    expect(p.configFile).toBe('/etc/tether/main.toml');
    expect(p.legacyConfigFile).toBe('/etc/tether/config.json');
    expect(p.dataDir).toBe('/var/lib/tether');
    expect(p.buffersDir).toBe('/var/lib/tether/buffers');
    expect(p.runDir).toBe('/var/lib/tether/run');
    expect(resolvePaths({ HOME: '/h', TETHER_CONFIG: 'x/c.toml' }, 'linux').configFile).toBe(path.resolve('x/c.toml'));
  });

  it('uses the macOS locations env-paths uses there', () => {
    const p = resolvePaths({ HOME: '/Users/u', XDG_CONFIG_HOME: '/ignored' }, 'darwin');
    expect(p.configFile).toBe('/Users/u/Library/Preferences/tether/config.toml');
    expect(p.dataDir).toBe('/Users/u/Library/Application Support/tether');
  });

  it('agrees with env-paths on the real environment', () => {
    const env = { ...process.env };
    delete env.TETHER_CONFIG;
    delete env.TETHER_DATA_DIR;
    const expected = envPaths('tether', { suffix: '' });
    const p = resolvePaths(env);
    expect(path.dirname(p.configFile)).toBe(expected.config);
    expect(p.dataDir).toBe(expected.data);
  });

  it('is a function of the env it is given, not of process.env', () => {
    const a = resolvePaths({ HOME: '/a' }, 'linux');
    const b = resolvePaths({ HOME: '/b' }, 'linux');
    expect(a.dataDir).toBe('/a/.local/share/tether');
    expect(b.dataDir).toBe('/b/.local/share/tether');
  });
});

describe('loadConfig', () => {
  it('gives every default when there is no file', async () => {
    expect(await loadConfig(paths, {})).toEqual({ config: DEFAULTS, source: null, warnings: [] });
  });

  it('fills in defaults around the keys a file sets', async () => {
    await writeToml('tls = false\n[buffer]\nidle_days = 7\n');
    const { config, source, warnings } = await loadConfig(paths, {});
    expect(source).toBe(paths.configFile);
    expect(warnings).toEqual([]);
    expect(config).toEqual({ ...DEFAULTS, tls: false, buffer: { ...DEFAULTS.buffer, idle_days: 7 } });
  });

  it('reads a full file', async () => {
    await writeToml(`
bindAddress = "[::1]:0"
publicBaseUrl = "https://tether.example.com"
name = "studio mac"
tls = false

[agent]
command = "/opt/pi/bin/pi --model 'my model'"
args = ["--thinking", "high"]
kind = "pi"
default_session = "work_1"
naming_model = "anthropic/claude-haiku-4-5"
restore = false

[tmux]
socket = "tether-test"

[stream]
ring_kb = 64
ping_interval_s = 45

[buffer]
session_cap_mb = 50
global_cap_mb = 500
min_free_gb = 0.5
idle_days = 3

[uploads]
dir = "/srv/uploads"
max_mb = 10
keep_days = 2

[worktrees]
dir = "/srv/worktrees"

[push]
team_id = "ABCDE12345"
key_id = "KEY1234567"
key_path = "/keys/AuthKey.p8"
bundle_id = "com.example.tether"
sandbox_url = "http://127.0.0.1:9999"
production_url = "https://push.example.com"
events = ["agent-exited", "unrestorable"]
usage_thresholds = [50, 90]

[discovery]
mdns = false
`);
    const { config } = await loadConfig(paths, {});
    expect(config).toEqual({
      bindAddress: '[::1]:0',
      publicBaseUrl: 'https://tether.example.com',
      name: 'studio mac',
      tls: false,
      agent: {
        command: "/opt/pi/bin/pi --model 'my model'",
        args: ['--thinking', 'high'],
        kind: 'pi',
        default_session: 'work_1',
        naming_model: 'anthropic/claude-haiku-4-5',
        restore: false,
      },
      tmux: { socket: 'tether-test' },
      stream: { ring_kb: 64, ping_interval_s: 45 },
      buffer: { session_cap_mb: 50, global_cap_mb: 500, min_free_gb: 0.5, idle_days: 3, watchdog_interval_s: 30 },
      uploads: { dir: '/srv/uploads', max_mb: 10, keep_days: 2 },
      worktrees: { dir: '/srv/worktrees' },
      push: {
        team_id: 'ABCDE12345',
        key_id: 'KEY1234567',
        key_path: '/keys/AuthKey.p8',
        bundle_id: 'com.example.tether',
        sandbox_url: 'http://127.0.0.1:9999',
        production_url: 'https://push.example.com',
        events: ['agent-exited', 'unrestorable'],
        usage_thresholds: [50, 90],
      },
      discovery: { mdns: false },
    });
    expect(Object.getPrototypeOf(config.agent)).toBe(Object.prototype);
  });

  const BAD: [toml: string, key: string, says: string][] = [
    ['[uploads]\ndir = "relative/dir"', 'uploads.dir', 'an absolute path'],
    ['[uploads]\nmax_mb = 0', 'uploads.max_mb', 'must be an integer from 1 to 4096, got 0'],
    ['[worktrees]\ndir = "worktrees"', 'worktrees.dir', 'an absolute path'],
    ['[buffer]\nsession_cap_mb = "abc"', 'buffer.session_cap_mb', 'must be an integer from 1 to 1048576, got "abc"'],
    ['[buffer]\nsession_cap_mb = 0', 'buffer.session_cap_mb', 'got 0'],
    ['[buffer]\nidle_days = 1.5', 'buffer.idle_days', 'must be an integer from 1 to 36500, got 1.5'],
    ['[buffer]\nmin_free_gb = -1', 'buffer.min_free_gb', 'must be a number from 0 to 1000000, got -1'],
    ['[buffer]\nmin_free_gb = inf', 'buffer.min_free_gb', 'got Infinity'],
    ['[stream]\nring_kb = 63', 'stream.ring_kb', 'must be an integer from 64 to 1048576, got 63'],
    ['[stream]\nring_kb = 1048577', 'stream.ring_kb', 'got 1048577'],
    ['[stream]\nping_interval_s = 0', 'stream.ping_interval_s', 'must be an integer from 1 to 3600, got 0'],
    ['tls = "yes"', 'tls', 'must be true or false, got "yes"'],
    ['bindAddress = "localhost"', 'bindAddress', 'must be host:port'],
    ['bindAddress = "127.0.0.1:65536"', 'bindAddress', 'got "127.0.0.1:65536"'],
    ['bindAddress = "::1:7777"', 'bindAddress', 'IPv6 in brackets'],
    ['bindAddress = 7777', 'bindAddress', 'got 7777'],
    ['publicBaseUrl = "not a url"', 'publicBaseUrl', 'must be an http:// or https:// URL, or "", got "not a url"'],
    ['publicBaseUrl = "ftp://x.example"', 'publicBaseUrl', 'got "ftp://x.example"'],
    ['name = "a\\nb"', 'name', 'got "a\\nb"'],
    ['[agent]\ndefault_session = "my session"', 'agent.default_session', 'must be 1 to 64 letters, digits, "_" or "-", got "my session"'],
    ['[agent]\ncommand = ""', 'agent.command', 'must be a command line: the program, then its arguments'],
    ['[agent]\ncommand = "   "', 'agent.command', 'got "   "'],
    ['[agent]\ncommand = "pi --model \'x"', 'agent.command', `got "pi --model 'x": it has an unterminated ' quote (from character 12)`],
    ["[agent]\ncommand = 'pi \"x'", 'agent.command', 'it has an unterminated " quote'],
    ['[agent]\ncommand = "pi \\\\"', 'agent.command', 'it has a backslash at the end'],
    ['[agent]\ncommand = "pi | tee log"', 'agent.command', 'an unquoted |'],
    ['[agent]\ncommand = "~/bin/pi"', 'agent.command', 'an unquoted ~'],
    ["[agent]\ncommand = ['pi']", 'agent.command', 'got an array'],
    ['[agent]\nargs = "--model x"', 'agent.args', 'must be an array of strings'],
    ['[agent]\nargs = ["--model", 3]', 'agent.args.1', 'must be a string without control characters, got 3'],
    ['[agent]\nkind = true', 'agent.kind', 'got true'],
    ['[agent]\nnaming_model = "haiku"', 'agent.naming_model', '"provider/model"'],
    ['[push]\nteam_id = "abc"', 'push.team_id', '10-character Apple team id'],
    ['[push]\nbundle_id = "tether"', 'push.bundle_id', 'bundle id'],
    ['[push]\nsandbox_url = "api.push.apple.com"', 'push.sandbox_url', 'URL'],
    ['[push]\nevents = "agent-exited"', 'push.events', 'must be an array of event names, each one of "awaiting-input", "agent-exited"'],
    ['[tmux]\nsocket = ["a"]', 'tmux.socket', 'got an array'],
    ['[stream]\nring_kb = 1979-05-27', 'stream.ring_kb', 'got the date 1979-05-27'],
    ['stream = 5', 'stream', 'must be a table ([stream]), got 5'],
    [
      '[buffer]\nsession_cap_mb = 2000\nglobal_cap_mb = 1000',
      'buffer.session_cap_mb',
      'must be at most buffer.global_cap_mb (1000), got 2000',
    ],
    [
      '[agent]\ncommand = "pi --model $MODEL"',
      'agent.command',
      'it has an unquoted $ (character 12): tether runs the command without a shell',
    ],
    [
      '[agent]\nkind = "gpt"',
      'agent.kind',
      `must be one of ${agentKinds()
        .map((k) => JSON.stringify(k))
        .join(', ')}, got "gpt"`,
    ],
    [
      '[push]\nevents = ["awaiting-input", "agent-crashed"]',
      'push.events.1',
      'must be one of "awaiting-input", "agent-exited", "unrestorable", "prompt-failed", got "agent-crashed"',
    ],
    [
      '[push]\nusage_thresholds = [80, 80]',
      'push.usage_thresholds',
      'must be an array of at most 10 different whole percents from 1 to 100',
    ],
    [
      '[push]\nusage_thresholds = [0, 95]',
      'push.usage_thresholds.0',
      'must be an array of at most 10 different whole percents from 1 to 100',
    ],
    [
      '[push]\nusage_thresholds = [101]',
      'push.usage_thresholds.0',
      'must be an array of at most 10 different whole percents from 1 to 100',
    ],
    [
      '[push]\nusage_thresholds = [80.5]',
      'push.usage_thresholds.0',
      'must be an array of at most 10 different whole percents from 1 to 100',
    ],
    ['[push]\nusage_thresholds = "80"', 'push.usage_thresholds', 'must be an array of at most 10 different whole percents from 1 to 100'],
  ];

  it.each(BAD)('refuses %j naming the key, the file and what is expected', async (toml, key, says) => {
    await writeToml(toml);
    const e = await configError();
    expect(e.key).toBe(key);
    expect(e.source).toBe(paths.configFile);
    expect(e.message).toContain(paths.configFile);
    expect(e.message).toContain(`${key} must be`);
    expect(e.message).toContain(says);
  });

  it('refuses unknown keys at the top level and in a section, with a hint', async () => {
    await writeToml('bind_address = "0.0.0.0:1"');
    let e = await configError();
    expect(e.key).toBe('bind_address');
    expect(e.message).toBe(
      `${paths.configFile}: unknown key bind_address (did you mean bindAddress?); known keys at the top level: bindAddress, publicBaseUrl, name, tls, agent, agents, tmux, stream, buffer, uploads, worktrees, push, discovery`,
    );

    await writeToml('[buffer]\nidle_days = 3\nidle_dayz = 4');
    e = await configError();
    expect(e.key).toBe('buffer.idle_dayz');
    expect(e.message).toContain(`${paths.configFile}: unknown key buffer.idle_dayz; known keys in [buffer]: session_cap_mb`);

    await writeToml('[agent]\nsocket = "x"');
    e = await configError();
    expect(e.message).toContain('unknown key agent.socket (did you mean tmux.socket?)');

    await writeToml('[agent.extra]\nx = 1');
    e = await configError();
    expect(e.key).toBe('agent.extra');

    await writeToml('[watchdog]\nx = 1\n[buffer]\nidle_days = "x"');
    e = await configError();
    expect(e.key).toBe('watchdog');
  });

  it('names the file, line and column of a TOML syntax error', async () => {
    await writeToml('tls = true\n[buffer]\nidle_days = \n');
    const e = await configError();
    expect(e.line).toBe(3);
    expect(e.message).toMatch(new RegExp(`^${escapeRe(paths.configFile)}: TOML syntax error on line 3, column \\d+: `));
  });

  it('reads a legacy config.json with a warning to move to TOML', async () => {
    await writeJson({ bindAddress: '0.0.0.0:8080', buffer: { idle_days: 2 } });
    const { config, source, warnings } = await loadConfig(paths, {});
    expect(source).toBe(paths.legacyConfigFile);
    expect(config.bindAddress).toBe('0.0.0.0:8080');
    expect(config.buffer).toEqual({ ...DEFAULTS.buffer, idle_days: 2 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(paths.legacyConfigFile);
    expect(warnings[0]).toContain(paths.configFile);
    expect(warnings[0]).toContain('TOML');
  });

  it('holds a legacy config.json to the same rules, naming it', async () => {
    await writeJson({ agent: { command: 'pi', extra: true } });
    let e = await configError();
    expect(e.message).toContain(`${paths.legacyConfigFile}: unknown key agent.extra`);

    await writeFile(paths.legacyConfigFile, '{\n  "tls": true,\n}');
    e = await configError();
    expect(e.message).toMatch(new RegExp(`^${escapeRe(paths.legacyConfigFile)}: JSON syntax error on line 3: `));

    await writeJson([1, 2]);
    e = await configError();
    expect(e.message).toBe(`${paths.legacyConfigFile}: the file must hold a table, got an array`);
  });

  it('prefers config.toml over config.json and says the JSON is ignored', async () => {
    await writeToml('name = "from-toml"');
    await writeJson({ name: 'from-json', bogus: 1 });
    const { config, source, warnings } = await loadConfig(paths, {});
    expect(source).toBe(paths.configFile);
    expect(config.name).toBe('from-toml');
    expect(warnings).toEqual([`${paths.legacyConfigFile} is ignored because ${paths.configFile} exists: delete it`]);
  });

  it('reads a TETHER_CONFIG that names a .json file as JSON', async () => {
    const file = path.join(dir, 'custom.json');
    await writeFile(file, '{"tls": false}');
    const p = resolvePaths({ HOME: dir, TETHER_CONFIG: file }, 'linux');
    const { config, source, warnings } = await loadConfig(p, {});
    expect(config.tls).toBe(false);
    expect(source).toBe(file);
    expect(warnings[0]).toContain(path.join(dir, 'config.toml'));
  });

  it('refuses a config path it cannot read', async () => {
    await mkdir(paths.configFile);
    const e = await configError();
    expect(e.message).toBe(`${paths.configFile}: cannot be read (EISDIR)`);
  });

  it('refuses a file that is not UTF-8', async () => {
    await writeFile(paths.configFile, Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3d, 0x22, 0xff, 0x22]));
    expect((await configError()).message).toBe(`${paths.configFile}: is not valid UTF-8 text`);
  });
});

describe('environment overrides', () => {
  it('override the file', async () => {
    await writeToml('bindAddress = "0.0.0.0:1"\ntls = true\n[tmux]\nsocket = "file"\n[agent]\ncommand = "pi"');
    const env = { TETHER_BIND: '[::1]:0', TETHER_TMUX_SOCKET: '/tmp/tmux-test/sock', TETHER_TLS: '0', TETHER_AGENT_COMMAND: 'fake-pi' };
    const { config } = await loadConfig(paths, env);
    expect(config.bindAddress).toBe('[::1]:0');
    expect(config.tmux.socket).toBe('/tmp/tmux-test/sock');
    expect(config.tls).toBe(false);
    expect(config.agent.command).toBe('fake-pi');
  });

  it('read TETHER_TLS as a flag and ignore empty variables', async () => {
    for (const [text, tls] of [
      ['1', true],
      ['true', true],
      ['FALSE', false],
      ['0', false],
    ] as const) {
      expect((await loadConfig(paths, { TETHER_TLS: text })).config.tls).toBe(tls);
    }
    expect((await loadConfig(paths, { TETHER_BIND: '', TETHER_TLS: '' })).config).toEqual(DEFAULTS);
  });

  it('name the variable when its value is bad', async () => {
    let e = await configError({ TETHER_BIND: 'nowhere' });
    expect(e.source).toBe('TETHER_BIND');
    expect(e.key).toBe('bindAddress');
    expect(e.message).toMatch(/^TETHER_BIND: must be host:port .* \(it sets bindAddress\), got "nowhere"$/);

    e = await configError({ TETHER_TLS: 'yes' });
    expect(e.message).toBe('TETHER_TLS: must be "1" or "0" (also "true" or "false") (it sets tls), got "yes"');

    e = await configError({ TETHER_AGENT_COMMAND: '   ' });
    expect(e.message).toContain('TETHER_AGENT_COMMAND: must be a command line');

    e = await configError({ TETHER_AGENT_COMMAND: 'pi "--model x' });
    expect(e.key).toBe('agent.command');
    expect(e.message).toMatch(
      /^TETHER_AGENT_COMMAND: must be a command line.* \(it sets agent.command\), got "pi \\"--model x": it has an unterminated " quote/,
    );
  });

  it('do not hide an error in the file', async () => {
    await writeToml('tls = 3');
    const e = await configError({ TETHER_TLS: '1' });
    expect(e.source).toBe(paths.configFile);
  });
});

describe('parseBindAddress', () => {
  it('splits host and port, IPv6 without its brackets, port 0 included', () => {
    expect(parseBindAddress('127.0.0.1:7777')).toEqual({ host: '127.0.0.1', port: 7777 });
    expect(parseBindAddress('[::1]:7777')).toEqual({ host: '::1', port: 7777 });
    expect(parseBindAddress('[::]:0')).toEqual({ host: '::', port: 0 });
    expect(parseBindAddress('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(parseBindAddress('0.0.0.0:65535')).toEqual({ host: '0.0.0.0', port: 65535 });
  });

  it('refuses what is not host:port', () => {
    for (const bad of [
      '',
      '7777',
      ':7777',
      '127.0.0.1',
      '127.0.0.1:',
      '127.0.0.1:-1',
      '127.0.0.1:65536',
      '::1:7777',
      '[::1]',
      '[nope]:1',
      '[127.0.0.1]:1',
      'a b:1',
      'host:12x',
    ]) {
      expect(() => parseBindAddress(bad), bad).toThrow(ConfigError);
    }
    expect(() => parseBindAddress('x')).toThrow(
      'bindAddress must be host:port with a port from 0 to 65535 (IPv6 in brackets: "[::1]:7777"), got "x"',
    );
  });

  it('round-trips any IPv4 or bracketed IPv6 address and port', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.integer({ min: 0, max: 65535 }), (host, port) => {
        const text = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
        expect(parseBindAddress(text)).toEqual({ host, port });
      }),
    );
  });
});

describe('docs/configuration.md', () => {
  it('documents every key, and its example file loads', async () => {
    const doc = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const [top, schema] of Object.entries(TetherConfigSchema.properties)) {
      const sub = Object.keys((schema as { properties?: object }).properties ?? {});
      if (sub.length === 0) expect(doc, top).toContain(`| \`${top}\` |`);
      else for (const k of sub) expect(doc, `${top}.${k}`).toContain(`| \`${k}\` |`);
    }
    const example = /## Example\s+```toml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    await writeToml(example!);
    const { config } = await loadConfig(paths, {});
    expect(config.bindAddress).toBe('0.0.0.0:7777');
  });
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
