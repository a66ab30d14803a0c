/** A logger for unit tests that keeps every line it is given: its level, its fields and its message. */
import type { Logger } from '../../src/log.js';

export interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

export function capturingLog(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void =>
      void lines.push(
        typeof obj === 'string' ? { level, obj: {}, msg: obj } : { level, obj: obj as Record<string, unknown>, msg: msg ?? '' },
      );
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return { log, lines };
}
