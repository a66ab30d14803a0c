import { describe, expect, it } from 'vitest';
import { plainHttpWarning } from '../../src/config/start-warnings.js';

describe('plainHttpWarning', () => {
  it('warns when plain HTTP is bound to an address other machines reach', () => {
    const w = plainHttpWarning(false, '0.0.0.0', '/home/ann/.config/tether/config.toml');
    expect(w).toContain('tls = false while bound to 0.0.0.0');
    expect(w).toContain('/home/ann/.config/tether/config.toml');
  });

  it('says nothing on a loopback address or with TLS on', () => {
    expect(plainHttpWarning(false, '127.0.0.1', '/c.toml')).toBeNull();
    expect(plainHttpWarning(true, '0.0.0.0', '/c.toml')).toBeNull();
  });
});
