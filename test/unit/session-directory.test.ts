import { describe, expect, it } from 'vitest';
import { defaultSessionDirectory } from '../../src/service/sessions/directory.js';

describe('defaultSessionDirectory', () => {
  const where = { defaultSession: 'main', daemonCwd: '/srv/project', home: '/home/ann' };

  it('starts the default session in the daemon directory', () => {
    expect(defaultSessionDirectory('main', where)).toBe('/srv/project');
  });

  it('starts every other session in the home directory', () => {
    expect(defaultSessionDirectory('pi-1', where)).toBe('/home/ann');
  });

  it('falls back to the daemon directory when there is no home', () => {
    expect(defaultSessionDirectory('pi-1', { ...where, home: undefined })).toBe('/srv/project');
  });
});
