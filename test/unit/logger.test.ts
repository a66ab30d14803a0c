import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLogger, stderrLogFormat } from '../../src/cli/logger.js';
import { resolvePaths } from '../../src/config/paths.js';

/** A stderr stand-in that records what it is given; `tty` says whether it claims to be a terminal. */
function fakeStderr(tty: boolean): { stream: NodeJS.WritableStream; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (b: Buffer) => (text += b.toString('utf8')));
  if (tty) Object.assign(stream, { isTTY: true });
  return { stream, text: () => text };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function logTo(tty: boolean, env: NodeJS.ProcessEnv = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tether-log-'));
  dirs.push(dataDir);
  const paths = resolvePaths({ TETHER_DATA_DIR: dataDir, HOME: dataDir });
  const err = fakeStderr(tty);
  const { log, close } = makeLogger(paths, env, err.stream);
  log.info({ session: 'pi-main' }, 'listening on https://127.0.0.1:7777');
  await close();
  return { stderr: err.text(), file: readFileSync(paths.logFile, 'utf8') };
}

describe('daemon logs', () => {
  it('a terminal reads lines a person can read: level, message and fields, no JSON', async () => {
    const { stderr, file } = await logTo(true);
    expect(stderr).toMatch(/INFO.*listening on https:\/\/127\.0\.0\.1:7777/);
    expect(stderr).toContain('session');
    expect(stderr.trimStart().startsWith('{')).toBe(false);
    // The file keeps JSON whatever stderr is.
    expect(JSON.parse(file.trim())).toMatchObject({ level: 30, msg: 'listening on https://127.0.0.1:7777', session: 'pi-main' });
  });

  it('a pipe gets the JSON lines of the log file', async () => {
    const { stderr, file } = await logTo(false);
    expect(JSON.parse(stderr.trim())).toMatchObject({ msg: 'listening on https://127.0.0.1:7777', session: 'pi-main' });
    expect(stderr).toBe(file);
  });

  it('TETHER_LOG_FORMAT overrides the choice both ways; anything else is ignored', async () => {
    expect(JSON.parse((await logTo(true, { TETHER_LOG_FORMAT: 'json' })).stderr.trim())).toMatchObject({ session: 'pi-main' });
    expect((await logTo(false, { TETHER_LOG_FORMAT: 'pretty' })).stderr).toMatch(/INFO.*listening/);
    expect(stderrLogFormat({ TETHER_LOG_FORMAT: 'xml' }, fakeStderr(false).stream)).toBe('json');
  });
});
