import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { RotatingLogFile } from '../../src/runtime/log-file.js';
import { logMaxBytes, makeLogger, stderrLogFormat } from '../../src/runtime/logger.js';
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
  const { log, openFile, close } = makeLogger(paths, env, err.stream);
  openFile();
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

describe('the log file before the port is held', () => {
  it('holds the lines until the file is opened, then writes them first; a logger never opened writes no file', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'tether-log-held-')), 'data');
    dirs.push(path.dirname(dataDir));
    const paths = resolvePaths({ TETHER_DATA_DIR: dataDir, HOME: dataDir });
    const refused = makeLogger(paths, {}, fakeStderr(false).stream);
    refused.log.warn('a warning of a start that is refused');
    await new Promise((r) => setImmediate(r));
    await refused.close();
    // No data dir, no log file: the refusal went to stderr only.
    expect(existsSync(dataDir)).toBe(false);

    const err = fakeStderr(false);
    const started = makeLogger(paths, {}, err.stream);
    started.log.info('before the port');
    await new Promise((r) => setImmediate(r));
    expect(err.text()).toContain('before the port');
    expect(existsSync(paths.logFile)).toBe(false);
    started.openFile();
    started.log.info('after the port');
    await started.close();
    const lines = readFileSync(paths.logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(lines).toEqual(['before the port', 'after the port']);
    expect(statSync(paths.logFile).mode & 0o777).toBe(0o600);
  });
});

describe('the log file cap', () => {
  function dir(): string {
    const d = mkdtempSync(path.join(tmpdir(), 'tether-logcap-'));
    dirs.push(d);
    return d;
  }

  it('rotates tether.log into .1, .2, .3 at the cap: no file past it, no line split, lost or written twice within what is kept', () => {
    const file = path.join(dir(), 'tether.log');
    const log = new RotatingLogFile(file, 1000, 3);
    const lines = Array.from({ length: 400 }, (_, i) => `{"n":${i},"msg":"${'x'.repeat(i % 37)}"}\n`);
    for (const l of lines) log.write(l);
    log.close();
    const parts = [file, `${file}.1`, `${file}.2`, `${file}.3`];
    for (const p of parts) expect(statSync(p).size).toBeLessThanOrEqual(1000);
    expect(existsSync(`${file}.4`)).toBe(false);
    for (const p of parts) expect((statSync(p).mode & 0o777).toString(8)).toBe('600');
    // Oldest first: .3, .2, .1, then the live file; together they are the newest lines, in order.
    const kept = [...parts].reverse().flatMap((p) =>
      readFileSync(p, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
    expect(kept.length).toBeGreaterThan(40);
    expect(kept).toEqual(lines.slice(lines.length - kept.length).map((l) => l.trimEnd()));
  });

  it("writes a turn's lines when the turn ends, in order, without waiting for a close", async () => {
    const file = path.join(dir(), 'tether.log');
    const log = new RotatingLogFile(file, 10_000, 3);
    for (let i = 0; i < 50; i++) log.write(`{"n":${i}}\n`);
    await new Promise((r) => setImmediate(r));
    expect(readFileSync(file, 'utf8')).toBe(Array.from({ length: 50 }, (_, i) => `{"n":${i}}\n`).join(''));
    log.close();
  });

  it('a line logged just before the process dies of an error still reaches the file', () => {
    const dataDir = dir();
    const logger = JSON.stringify(path.resolve('src/runtime/logger.ts'));
    const pathsOf = JSON.stringify(path.resolve('src/config/paths.ts'));
    const script = `
      const { makeLogger } = await import(${logger});
      const { resolvePaths } = await import(${pathsOf});
      const { log, openFile } = makeLogger(resolvePaths({ TETHER_DATA_DIR: ${JSON.stringify(dataDir)}, HOME: ${JSON.stringify(dataDir)} }), {}, process.stderr);
      openFile();
      log.error('last words before the crash');
      throw new Error('boom');`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status).not.toBe(0);
    expect(child.stderr).toContain('boom');
    expect(readFileSync(path.join(dataDir, 'tether.log'), 'utf8')).toContain('last words before the crash');
  });

  it('keeps appending to an existing file up to the cap, across restarts', () => {
    const file = path.join(dir(), 'tether.log');
    let log = new RotatingLogFile(file, 100, 3);
    log.write(`${'a'.repeat(59)}\n`);
    log.close();
    log = new RotatingLogFile(file, 100, 3);
    log.write(`${'b'.repeat(59)}\n`);
    log.close();
    expect(readFileSync(file, 'utf8')).toBe(`${'b'.repeat(59)}\n`);
    expect(readFileSync(`${file}.1`, 'utf8')).toBe(`${'a'.repeat(59)}\n`);
  });

  it('TETHER_LOG_MAX_MB sets the cap; a bad value is one clear line', () => {
    expect(logMaxBytes({})).toBe(10 * 1024 * 1024);
    expect(logMaxBytes({ TETHER_LOG_MAX_MB: '0.5' })).toBe(524_288);
    for (const bad of ['0', '-1', 'ten', '2000', 'Infinity'])
      expect(() => logMaxBytes({ TETHER_LOG_MAX_MB: bad })).toThrow(/^TETHER_LOG_MAX_MB: must be a number of MB from 0.01 to 1024, got "/);
  });
});
