/**
 * Matches tether's one error by its code: `expect(fn).toThrow(domainError('invalid'))`,
 * `rejects.toThrow(domainError('session-exists'))`.
 */
import { expect } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';

/** A DomainError of `code` (an asymmetric matcher). */
export const domainError = (code: ErrorCode): unknown => expect.objectContaining({ name: 'DomainError', code });
