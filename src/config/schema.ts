/**
 * The config file's schema (docs/configuration.md "Keys"): every key with its default and
 * its allowed values. Key names are exactly the file's (`bindAddress` at the top, snake_case
 * in the sections), so docs/configuration.md, the file and the code use the same names.
 *
 * Invariant: every object is closed (`additionalProperties: false`), so an unknown key is an
 * error, and every leaf carries an `expected` annotation: the one phrase a user reads after
 * "must be" when the value is wrong (load.ts builds the message from it).
 *
 * The schema is built by `tetherConfigSchema(Type)`, given TypeBox: `npm run schemas` builds it
 * into the generated config.checks.ts (the JSON schema and its check), which is what a daemon
 * loads; load.ts builds the TypeBox schema itself only to word an error. Its refinements are the
 * named rules of CONFIG_RULES, so the generated check can call the same functions.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { Static, TSchema, Type as TypeBuilder } from 'typebox';
import { isValidSessionName } from '../protocol/session-name.js';
import { hasControlChar } from '../protocol/text.js';
import { DEFAULT_AGENT_KIND, DEFAULT_SESSION_NAME } from './default-agent.js';

/** Session names (docs/configuration.md). */
/** Longest `name` shown in the QR payload and on the phone. */
export const MAX_SIDECAR_NAME_LENGTH = 64;
/** Bounds of `[stream] ring_kb`. */
export const RING_KB_MIN = 64;
export const RING_KB_MAX = 1_048_576;
/** Upper bound of the MB caps: 1 TiB. */
const CAP_MB_MAX = 1_048_576;
/** Upper bound of `min_free_gb`, which also keeps `inf` out. */
const FREE_GB_MAX = 1_000_000;
/** Upper bound of `idle_days`: 100 years. */
const IDLE_DAYS_MAX = 36_500;
/** The largest upload a config may allow, in MiB. */
const UPLOAD_MB_MAX = 4096;

/** A bind address split into its parts; `host` has no brackets (`::1`, not `[::1]`). */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Parses `host:port` (`[v6]:port` for IPv6; port 0..65535), or null when it does not parse. */
/** Loopback hosts: a phone cannot reach them, and plain http on them stays on the machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

export function tryParseBindAddress(s: string): BindAddress | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s);
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65_535) return null;
  const v6 = m[1];
  if (v6 !== undefined) return isIPv6(v6) ? { host: v6, port } : null;
  const host = m[2] ?? '';
  return isIPv4(host) || HOST_NAME.test(host) ? { host, port } : null;
}

/** True for "" or an http(s) URL that parses. */
function isEmptyOrHttpUrl(s: string): boolean {
  if (s === '') return true;
  if (!URL.canParse(s)) return false;
  const { protocol } = new URL(s);
  return protocol === 'http:' || protocol === 'https:';
}

/** Text a terminal or a QR code shows as is: no control characters. */
function hasNoControlChars(s: string): boolean {
  return !hasControlChar(s);
}

/**
 * What an agent's `kind` may say, as the config's schema checks it: a short lowercase word. Which
 * words are kinds (`auto`, one per agent tether integrates with, `other`) is the adapter list's
 * to say (src/agent/contract/adapters.ts): `loadConfig` is given them (docs/agents.md).
 */
export const AGENT_KIND_RE = /^[a-z][a-z0-9-]{0,31}$/;
const AGENT_KIND_EXPECTED = '"auto", "other", or the kind of an agent tether integrates with (docs/agents.md)';
/** A named agent (`[agents.<name>]`): letters, digits, `_` and `-`, at most 32; `default` names `[agent]`. */
export const AGENT_NAME_PATTERN = '^[A-Za-z0-9_-]{1,32}$';
export const AGENT_NAME_RE = new RegExp(AGENT_NAME_PATTERN);
export const DEFAULT_AGENT_NAME = 'default';
export const AGENT_NAME_EXPECTED = '1 to 32 letters, digits, "_" or "-"';

/** Whether `name` may name an agent (in the config, in `POST /sessions`, in `tether attach --agent`). */
export function isValidAgentName(name: string): boolean {
  return AGENT_NAME_RE.test(name);
}
export const COMMAND_LINE_EXPECTED =
  'a command line: the program, then its arguments, quoted as in a shell (no variables, globs, pipes or redirections)';

/** The usage windows' thresholds a push warns at (`[push] usage_thresholds`, docs/push.md "Usage"), in percent. */
export const DEFAULT_USAGE_THRESHOLDS = [80, 95] as const;
/** Most thresholds a config may name. */
export const MAX_USAGE_THRESHOLDS = 10;
const USAGE_THRESHOLDS_EXPECTED = `an array of at most ${MAX_USAGE_THRESHOLDS} different whole percents from 1 to 100 ([] turns the warnings off)`;

/** What may be pushed (`[push] events`, docs/push.md "When"): every kind by default. */
export const PUSH_EVENTS = ['awaiting-input', 'agent-exited', 'unrestorable', 'prompt-failed'] as const;
export type PushEvent = (typeof PUSH_EVENTS)[number];
const PUSH_EVENTS_EXPECTED = `one of ${PUSH_EVENTS.map((k) => `"${k}"`).join(', ')}`;

const APPLE_ID = /^[A-Z0-9]{10}$/;
const BUNDLE_ID = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/;
const URL_EXPECTED = 'an http:// or https:// URL, or ""';

/**
 * What a string key must be beyond "a string", by rule name. Every rule keeps control
 * characters out. Named (not closures made per key) so the generated check refers to them.
 */
export const CONFIG_RULES = {
  text: hasNoControlChars,
  bindAddress: (s: string) => hasNoControlChars(s) && tryParseBindAddress(s) !== null,
  url: (s: string) => hasNoControlChars(s) && isEmptyOrHttpUrl(s),
  sidecarName: (s: string) => hasNoControlChars(s) && [...s].length <= MAX_SIDECAR_NAME_LENGTH,
  commandLine: (s: string) => hasNoControlChars(s) && s.trim() !== '',
  agentKind: (s: string) => AGENT_KIND_RE.test(s),
  sessionName: (s: string) => hasNoControlChars(s) && isValidSessionName(s),
  namingModel: (s: string) => hasNoControlChars(s) && (s === '' || /^[^/\s]+\/\S+$/.test(s)),
  uploadDir: (s: string) => hasNoControlChars(s) && (s === '' || s.startsWith('/')),
  appleId: (s: string) => hasNoControlChars(s) && (s === '' || APPLE_ID.test(s)),
  bundleId: (s: string) => hasNoControlChars(s) && (s === '' || BUNDLE_ID.test(s)),
  distinct: (a: readonly number[]) => new Set(a).size === a.length,
} as const;
export type ConfigRule = keyof typeof CONFIG_RULES;
/** The rules of a string value. */
type StringRule = { [K in ConfigRule]: (typeof CONFIG_RULES)[K] extends (s: string) => boolean ? K : never }[ConfigRule];

/** The config's schema, built with TypeBox's `Type` (see the header: the daemon loads the generated one). */
export function tetherConfigSchema(Type: typeof TypeBuilder) {
  /** A string leaf, held to its rule. */
  const str = (def: string, expected: string, rule: StringRule = 'text') =>
    Type.Refine(Type.String({ default: def, expected }), CONFIG_RULES[rule], () => expected);
  const int = (def: number, minimum: number, maximum: number) =>
    Type.Integer({ default: def, minimum, maximum, expected: `an integer from ${minimum} to ${maximum}` });
  const section = <P extends Record<string, TSchema>>(table: string, properties: P) =>
    Type.Object(properties, { default: {}, additionalProperties: false, expected: `a table ([${table}])` });

  /** The keys that say which program an agent is: `[agent]` and every `[agents.<name>]` have them. */
  const agentProgramKeys = (defaultCommand: string | null) => ({
    command:
      defaultCommand === null
        ? Type.Refine(Type.String({ expected: COMMAND_LINE_EXPECTED }), CONFIG_RULES.commandLine, () => COMMAND_LINE_EXPECTED)
        : str(defaultCommand, COMMAND_LINE_EXPECTED, 'commandLine'),
    args: Type.Array(str('', 'a string without control characters'), {
      default: [],
      expected: "an array of strings (arguments added after the command line's own)",
    }),
    kind: str('auto', AGENT_KIND_EXPECTED, 'agentKind'),
  });
  // The same names as PUSH_EVENTS, in its order (test/unit/schemas.test.ts).
  const pushEvent = Type.Union(
    [Type.Literal('awaiting-input'), Type.Literal('agent-exited'), Type.Literal('unrestorable'), Type.Literal('prompt-failed')],
    { expected: PUSH_EVENTS_EXPECTED },
  );

  /** The whole config; every key has its default, so `{}` is a valid file. */
  return Type.Object(
    {
      bindAddress: str('127.0.0.1:7777', 'host:port with a port from 0 to 65535 (IPv6 in brackets: "[::1]:7777")', 'bindAddress'),
      publicBaseUrl: str('', URL_EXPECTED, 'url'),
      name: str('', `at most ${MAX_SIDECAR_NAME_LENGTH} characters, no control characters ("" = the host name)`, 'sidecarName'),
      tls: Type.Boolean({ default: true, expected: 'true or false' }),
      agent: section('agent', {
        ...agentProgramKeys(DEFAULT_AGENT_KIND),
        default_session: str(DEFAULT_SESSION_NAME, '1 to 64 letters, digits, "_" or "-"', 'sessionName'),
        naming_model: str('', '"provider/model", or "" to turn auto-naming off', 'namingModel'),
        restore: Type.Boolean({ default: true, expected: 'true or false' }),
      }),
      /** Further agents by name (`[agents.claude]`); the names are checked in load.ts (`isValidAgentName`). */
      agents: Type.Optional(
        Type.Record(
          Type.String(),
          Type.Object(agentProgramKeys(null), {
            additionalProperties: false,
            expected: 'a table ([agents.<name>]) with command, and optionally args and kind',
          }),
          { expected: 'tables of named agents ([agents.<name>])' },
        ),
      ),
      tmux: section('tmux', {
        socket: str('', 'a tmux socket name or path, or "" for the default server'),
      }),
      stream: section('stream', {
        ring_kb: int(4096, RING_KB_MIN, RING_KB_MAX),
        ping_interval_s: int(20, 1, 3600),
      }),
      buffer: section('buffer', {
        session_cap_mb: int(100, 1, CAP_MB_MAX),
        global_cap_mb: int(1024, 1, CAP_MB_MAX),
        min_free_gb: Type.Number({ default: 1, minimum: 0, maximum: FREE_GB_MAX, expected: `a number from 0 to ${FREE_GB_MAX}` }),
        idle_days: int(30, 1, IDLE_DAYS_MAX),
        watchdog_interval_s: int(30, 1, 3600),
      }),
      uploads: section('uploads', {
        dir: str('', 'an absolute path, or "" for a folder per session in the data dir', 'uploadDir'),
        max_mb: int(25, 1, UPLOAD_MB_MAX),
        keep_days: int(7, 1, IDLE_DAYS_MAX),
      }),
      worktrees: section('worktrees', {
        dir: str('', 'an absolute path, or "" for worktrees/ in the data dir', 'uploadDir'),
      }),
      push: section('push', {
        team_id: str('', 'a 10-character Apple team id (A-Z, 0-9), or ""', 'appleId'),
        key_id: str('', 'a 10-character Apple key id (A-Z, 0-9), or ""', 'appleId'),
        key_path: str('', 'the path of the .p8 key file, or ""'),
        bundle_id: str('', 'a bundle id such as "com.example.tether", or ""', 'bundleId'),
        sandbox_url: str('https://api.sandbox.push.apple.com', URL_EXPECTED, 'url'),
        production_url: str('https://api.push.apple.com', URL_EXPECTED, 'url'),
        events: Type.Array(pushEvent, {
          default: [...PUSH_EVENTS],
          expected: `an array of event names, each ${PUSH_EVENTS_EXPECTED}`,
        }),
        usage_thresholds: Type.Refine(
          Type.Array(Type.Integer({ minimum: 1, maximum: 100, expected: USAGE_THRESHOLDS_EXPECTED }), {
            default: [...DEFAULT_USAGE_THRESHOLDS],
            maxItems: MAX_USAGE_THRESHOLDS,
            expected: USAGE_THRESHOLDS_EXPECTED,
          }),
          CONFIG_RULES.distinct,
          () => USAGE_THRESHOLDS_EXPECTED,
        ),
      }),
      discovery: section('discovery', {
        mdns: Type.Boolean({ default: true, expected: 'true or false' }),
      }),
    },
    { additionalProperties: false, expected: 'a table' },
  );
}

/** The validated config, keys as in the file. */
export type TetherConfig = Static<ReturnType<typeof tetherConfigSchema>>;
