/**
 * A temp directory of stand-in programs for tests that resolve an agent's program on PATH or
 * by its path: each one a shell script that does nothing and exits 0. The directory is removed
 * after the test file's tests (or its describe block's, when called inside one).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface ProgramDir {
  /** The directory (put it on PATH to find the programs by name). */
  readonly dir: string;
  /** Writes an executable stand-in named `name` in the directory; returns its path. */
  readonly script: (name: string) => string;
}

export function useProgramDir(prefix: string): ProgramDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    script: (name) => {
      const path = join(dir, name);
      writeFileSync(path, '#!/bin/sh\nexec true "$@"\n');
      chmodSync(path, 0o755);
      return path;
    },
  };
}
